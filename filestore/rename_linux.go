package filestore

import "golang.org/x/sys/unix"

// renameNoReplace renames without replacing an existing destination, in one
// atomic step (renameat2 RENAME_NOREPLACE). On a file system without it the
// caller's flock still keeps memtool processes from racing: the destination
// is checked and the rename done under the lock.
func renameNoReplace(olddirfd int, oldname string, newdirfd int, newname string) error {
	err := unix.Renameat2(olddirfd, oldname, newdirfd, newname, unix.RENAME_NOREPLACE)
	if err != unix.EINVAL && err != unix.ENOSYS {
		return err
	}
	return renameChecked(olddirfd, oldname, newdirfd, newname)
}
