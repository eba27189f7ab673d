package filestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// readNames reads the names with getdents64 directly, 64 KiB of entries
// at a time, except that the buffer starts at 4 KiB and grows only once a
// read half fills it, so that listing a small directory costs a small
// buffer: the names of one read go into one string (one allocation, not
// one each), and the entries' types come from d_type.
func readNames(ctx context.Context, d *os.File, fn func(string) bool) error {
	return readOn(ctx, d, false, fn)
}

// readOn is readNames from where d's offset is; special keeps FIFOs,
// sockets and devices.
func readOn(ctx context.Context, d *os.File, special bool, fn func(string) bool) error {
	buf := make([]byte, 4<<10)
	for {
		n, err := getdents(d, buf)
		if err != nil || n <= 0 {
			return err
		}
		if more, err := emitNames(buf[:n], special, fn); err != nil || !more {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if n > len(buf)/2 && len(buf) < 64<<10 {
			buf = make([]byte, 64<<10)
		}
	}
}

// readSnapshot calls fn with the names of the directory d, as readNames
// gives them, unless a read of them finds more than max (max < 0: any
// number). Then it answers complete = false and calls rest with every
// name instead, as readNames would from the start, reading on from what
// it has read rather than reading that again. See snapshot, and changed
// there.
func (s *Store) readSnapshot(ctx context.Context, d *os.File, max int, fn, rest func(string) bool) (complete, changed bool, err error) {
	return s.snapshot(ctx, d, max, false, fn, rest)
}

// dirNames returns the names in the directory d but for the store's own,
// for ReadDir. See snapshot, and changed there.
func (s *Store) dirNames(ctx context.Context, d *os.File) (names []string, changed bool, err error) {
	_, changed, err = s.snapshot(ctx, d, -1, true, func(n string) bool {
		names = append(names, n)
		return true
	}, nil)
	return names, changed, err
}

// snapshot reads the names of d in one getdents call, which holds the
// directory's lock against the renames, links and unlinks in it: from the
// start, with a buffer of firstRead bytes that it doubles until they fit
// or, if max >= 0, until a read that did not hold them all holds more
// than max of the names it lists (the entries it leaves out take room
// too): then the names go to rest, read on as readOn reads. A listing
// read in several calls is of no moment: tmpfs gives a name renamed into
// a directory a new place in it, so such a listing may pass over a file
// replaced meanwhile, or list a renamed one under both its names. So
// changed reports a read that came in parts although the buffer had
// room, and the caller reads again (see stable).
// That is common: a call ends after its first entry when a signal is
// pending, as Go's preemption signals often are under load, on any file
// system. A file system that answers a few entries a call whatever the
// buffer (FUSE) is read on to the end, as readNames reads, and so is read
// again until stable reads it holding the write lock. changed also
// reports that the directory's ctime changed during the read, which
// catches (between clock ticks; timestamps are coarse) a change that one
// call may miss where the seek to the start fixes where a listing ends
// (tmpfs in some kernels).
func (s *Store) snapshot(ctx context.Context, d *os.File, max int, special bool, fn, rest func(string) bool) (complete, changed bool, err error) {
	var (
		probe         [2 * maxDirent]byte
		before, after unix.Stat_t
	)
	for size := 0; ; size *= 2 {
		if err := withFd(d, func(fd int) error { return fstat(fd, &before) }); err != nil {
			return false, false, err
		}
		if size == 0 {
			size = firstRead(before.Size, max)
		}
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			return false, false, err
		}
		buf := make([]byte, size)
		n, err := getdents(d, buf)
		if err != nil || n <= 0 {
			return err == nil, false, err
		}
		m, err := getdents(d, probe[:])
		if err == nil {
			err = withFd(d, func(fd int) error { return fstat(fd, &after) })
		}
		changed = before.Ctim != after.Ctim
		switch {
		case err != nil:
			return false, false, err
		case m > 0 && n > size-maxDirent: // they did not fit
			more, err := listedMore(buf[:n], special, max)
			if err == nil && more {
				err = readRest(ctx, d, special, rest, buf[:n], probe[:m])
			}
			if err != nil || more {
				return false, false, err
			}
			continue
		case m <= 0: // the first call read them all
			_, err := emitNames(buf[:n], special, fn)
			return true, changed, err
		}
		// Answered in parts, or changed between the calls: read on, but
		// the names are of no one moment.
		return true, true, readRest(ctx, d, special, fn, buf[:n], probe[:m])
	}
}

// firstRead is the buffer snapshot first reads a directory with: the
// directory's size as fstat gives it (on ext4 its blocks, on tmpfs 20
// bytes an entry) and half again, as an entry read takes more room than
// one stored, within 16 KiB and the room of names+3 entries of the longest
// names (names < 0: 1 MiB). It is a guess: too small, snapshot reads again
// with twice the room; but most directories' entries fit at once, and the
// names of a large one, more than names, are read once, not a part of them
// once per doubling.
func firstRead(size int64, names int) int {
	ceiling := int64(1 << 20)
	if names >= 0 && names < (1<<20)/maxDirent-3 {
		ceiling = int64(names+3) * maxDirent
	}
	return int(max(min(size+size/2, ceiling), 16<<10))
}

// listedMore reports whether the entries in b, what one getdents call
// read, hold more than max names that emitNames lists (max < 0: never).
func listedMore(b []byte, special bool, max int) (bool, error) {
	if max < 0 {
		return false, nil
	}
	for count := 0; len(b) > 0; {
		_, listed, rest, err := nextEntry(b, special)
		if err != nil {
			return false, err
		}
		if listed {
			if count++; count > max {
				return true, nil
			}
		}
		b = rest
	}
	return false, nil
}

// readRest calls fn with the names in the reads done, then with those of
// the rest of d, as readOn reads them.
func readRest(ctx context.Context, d *os.File, special bool, fn func(string) bool, done ...[]byte) error {
	for _, b := range done {
		if more, err := emitNames(b, special, fn); err != nil || !more {
			return err
		}
	}
	return readOn(ctx, d, special, fn)
}

func getdents(d *os.File, buf []byte) (n int, err error) {
	err = withFd(d, func(fd int) error {
		for {
			n, err = unix.Getdents(fd, buf)
			if err != unix.EINTR {
				return err
			}
		}
	})
	if readHook != nil && n > 0 {
		readHook(n)
	}
	return n, err
}

// readHook, set by a test, is given the bytes of entries each read of a
// directory returned.
var readHook func(n int)

// emitNames calls fn with the names of the entries in b, what one
// getdents call read, but for "." and "..", the store's own and, unless
// special, FIFOs, sockets and devices (by d_type). The names go into one
// string, allocated to their size. more is false once fn has returned
// false.
func emitNames(b []byte, special bool, fn func(string) bool) (more bool, err error) {
	size, count := 0, 0
	for rest := b; len(rest) > 0; {
		name, listed, next, err := nextEntry(rest, special)
		if err != nil {
			return false, err
		}
		if listed {
			size += len(name)
			count++
		}
		rest = next
	}
	var all strings.Builder
	all.Grow(size)
	ends := make([]int, 0, count)
	for rest := b; len(rest) > 0; {
		name, listed, next, _ := nextEntry(rest, special)
		if listed {
			all.Write(name)
			ends = append(ends, all.Len())
		}
		rest = next
	}
	names, start := all.String(), 0
	for _, end := range ends {
		if !fn(names[start:end]) {
			return false, nil
		}
		start = end
	}
	return true, nil
}

// nextEntry reads the entry at the start of b (struct linux_dirent64:
// ino u64, off s64, reclen u16, type u8, then the name, NUL-terminated)
// and reports whether emitNames lists it, and what follows it. A
// trailing part shorter than an entry is nothing.
func nextEntry(b []byte, special bool) (name []byte, listed bool, rest []byte, err error) {
	if len(b) < 19 {
		return nil, false, nil, nil
	}
	reclen := int(binary.NativeEndian.Uint16(b[16:18]))
	if reclen < 19 || reclen > len(b) {
		return nil, false, nil, unix.EIO
	}
	typ, name := b[18], b[19:reclen]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	switch {
	case string(name) == "." || string(name) == "..", ownEntry(string(name)):
		return name, false, b[reclen:], nil
	case special:
	case typ == unix.DT_FIFO, typ == unix.DT_SOCK, typ == unix.DT_CHR, typ == unix.DT_BLK:
		return name, false, b[reclen:], nil
	}
	return name, true, b[reclen:], nil
}
