package filestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// readNames reads the names with getdents64 directly, 64 KiB of entries
// at a time, except that the buffer starts at 4 KiB and grows only once a
// read half fills it, so that listing a small directory costs a small
// buffer: the names of one read go into one string (one allocation, not
// one each), and the entries' types come from d_type.
func readNames(ctx context.Context, d *os.File, fn func(string) bool) error {
	var (
		buf   = make([]byte, 4<<10)
		arena []byte
		ends  []int
	)
	for {
		arena, ends = arena[:0], ends[:0]
		var n int
		err := withFd(d, func(fd int) error {
			var err error
			for {
				n, err = unix.Getdents(fd, buf)
				if err != unix.EINTR {
					return err
				}
			}
		})
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// then the name, NUL-terminated.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return unix.EIO
			}
			typ, name := b[18], b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			switch {
			case string(name) == "." || string(name) == "..", ownEntry(string(name)):
				continue
			case typ == unix.DT_FIFO, typ == unix.DT_SOCK, typ == unix.DT_CHR, typ == unix.DT_BLK:
				continue
			}
			arena = append(arena, name...)
			ends = append(ends, len(arena))
		}
		all, start := string(arena), 0
		for _, end := range ends {
			if !fn(all[start:end]) {
				return nil
			}
			start = end
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if n > len(buf)/2 && len(buf) < 64<<10 {
			buf = make([]byte, 64<<10)
		}
	}
}
