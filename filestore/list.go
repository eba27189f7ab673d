// This file holds ListNames, the listing of a directory's names without a
// stat per entry (memtool.NameLister).

package filestore

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/memtool/memtool"
)

var _ memtool.NameLister = (*Store)(nil)

// ListNames calls fn with each name in the directory name, as the
// directory holds them: no entry is examined, so a name may be one of an
// entry that Stat reports irregular or missing (a link that leads out, a
// file with several links, one removed meanwhile). Entries the directory
// itself says are FIFOs, sockets or devices (d_type) are left out, and so
// are the store's own. The names of one read of the directory share one
// allocation.
func (s *Store) ListNames(ctx context.Context, name string, fn func(name string) bool) error {
	d, err := s.openDir(ctx, name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := readNames(ctx, d, fn); err != nil {
		return mapErr("readdir", name, err)
	}
	return nil
}

var _ memtool.DirLister = (*Store)(nil)

// ListDir reads the directory name once: its names, then, if they are at
// most max, each entry as ReadDir does, through the same descriptor;
// otherwise it gives fn every name, as ListNames does. Entries the
// directory types as FIFOs, sockets or devices are left out either way.
// The names are of one moment (see snapshot and stable) when they are at
// most max, or few enough to hold.
func (s *Store) ListDir(ctx context.Context, name string, max int, fn func(name string) bool) ([]memtool.FileInfo, bool, error) {
	d, err := s.openDir(ctx, name)
	if err != nil {
		return nil, false, err
	}
	defer d.Close()
	if max < 0 {
		max = 0 // no names are at most max
	}
	var (
		names   []string
		entries []memtool.FileInfo
		handed  bool // fn has had the names, more than max of them
	)
	// collect keeps the names while they are at most max. Past max, no
	// listing of one moment is owed: fn has them all, those kept and
	// those read on, and the directory is not read again, however the
	// reads came (a signal cuts one short).
	collect := func(n string) bool {
		if handed {
			return fn(n)
		}
		if names = append(names, n); len(names) <= max {
			return true
		}
		handed = true
		for _, n := range names {
			if !fn(n) {
				return false
			}
		}
		return true
	}
	err = s.stable(ctx, func() (bool, error) {
		if handed {
			// stable may try once more (an older memtool's lock file
			// appeared), but fn must not have the names again.
			return true, nil
		}
		names = names[:0]
		complete, changed, err := s.readSnapshot(ctx, d, max, collect, fn)
		if !complete {
			handed = true // fn had every name from the start
		}
		var vanished bool
		if err == nil && !handed {
			entries, vanished = s.examine(d, name, names)
		}
		return handed || !changed && !vanished, err
	})
	switch {
	case err != nil:
		return nil, false, mapErr("readdir", name, err)
	case handed:
		return nil, true, nil
	}
	return entries, false, nil
}

// maxDirent bounds the room one entry takes in a read of a directory:
// Linux's largest linux_dirent64 (19 bytes, a name of NAME_MAX bytes and
// its NUL, rounded up to 8).
const maxDirent = 280

// ownEntry reports whether a directory entry is the store's own.
func ownEntry(name string) bool { return strings.HasPrefix(name, ownPrefix) }

// listedType reports whether an entry of type t (as the directory gives
// it, without a stat) may be listed: not a FIFO, socket or device.
func listedType(t os.FileMode) bool {
	return t&(os.ModeNamedPipe|os.ModeSocket|os.ModeDevice|os.ModeCharDevice) == 0
}

// readNamesPortable reads the names with os.File.ReadDir, a batch at a
// time, which takes each entry's type from the directory where the system
// gives it.
func readNamesPortable(ctx context.Context, d *os.File, fn func(string) bool) error {
	for {
		entries, err := d.ReadDir(1024)
		for _, e := range entries {
			if !ownEntry(e.Name()) && listedType(e.Type()) && !fn(e.Name()) {
				return nil
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
