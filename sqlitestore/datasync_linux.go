package sqlitestore

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncData is fdatasync(2): a file's data, and the size and blocks that
// reading it back needs, without its times.
func syncData(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
