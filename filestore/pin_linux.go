package filestore

import (
	"os"

	"golang.org/x/sys/unix"
)

// pinAt opens the file base in d by path only (O_PATH: no read, no side
// effect of opening a device or a FIFO), so that a rename over it or an
// unlink of it, done while the pin is held, only drops its name: the
// kernel frees an unlinked file's blocks when its last reference goes,
// which costs a replace its longest part (ext4: about 150 µs of the
// rename's 170). Held across the rename under the write lock and released
// after it (see pin.release), that cost leaves the lock. Nothing there,
// or any failure: the zero pin, and the rename frees the blocks itself.
func pinAt(d *os.File, base string) pin {
	var p pin
	withFd(d, func(dfd int) error {
		fd, err := unix.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			p = pin{fd: fd, set: true}
		}
		return nil
	})
	return p
}
