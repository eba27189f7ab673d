package filestore

import (
	"bytes"
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// readNames reads the names with getdents64 directly: the names of a
// large directory go into one string (one allocation, not one each), and
// the entries' types come from d_type.
func readNames(d *os.File) ([]string, error) {
	var (
		buf   = make([]byte, 16<<10)
		arena []byte
		ends  []int
	)
	err := withFd(d, func(fd int) error {
		for {
			n, err := unix.Getdents(fd, buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if n <= 0 {
				return nil
			}
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the name, NUL-terminated.
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
		}
	})
	if err != nil {
		return nil, err
	}
	all := string(arena)
	out := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out, nil
}
