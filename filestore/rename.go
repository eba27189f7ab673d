package filestore

import "golang.org/x/sys/unix"

// renameChecked renames unless the destination exists (EEXIST). Not
// atomic by itself: the caller holds the store's lock.
func renameChecked(olddirfd int, oldname string, newdirfd int, newname string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(newdirfd, newname, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return unix.EEXIST
	} else if err != unix.ENOENT {
		return err
	}
	return unix.Renameat(olddirfd, oldname, newdirfd, newname)
}
