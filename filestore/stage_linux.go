package filestore

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openStaged creates a file without a name (O_TMPFILE) on the file system
// of the directory d. Nothing sees it, and nothing is left of it if the
// process or the machine dies before it is linked.
func openStaged(d *os.File) (*os.File, error) {
	var fd int
	err := withFd(d, func(dfd int) (err error) {
		fd, err = unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		return err
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "staged"), nil
}

// linkStaged gives the staged file f the name newname in the directory
// dfd; it fails with EEXIST if anything is there. Kernels before 6.10
// allow AT_EMPTY_PATH only with CAP_DAC_READ_SEARCH; linkat(2) names
// /proc/self/fd for them.
func linkStaged(f *os.File, dfd int, newname string) error {
	return withFd(f, func(fd int) error {
		err := unix.Linkat(fd, "", dfd, newname, unix.AT_EMPTY_PATH)
		if err == unix.ENOENT || err == unix.EPERM {
			if err2 := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dfd, newname, unix.AT_SYMLINK_FOLLOW); err2 != unix.ENOENT {
				err = err2
			}
		}
		return err
	})
}
