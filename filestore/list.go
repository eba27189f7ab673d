// This file holds ListNames, the listing of a directory's names without a
// stat per entry (memtool.NameLister).

package filestore

import (
	"context"
	"os"
	"strings"

	"github.com/memtool/memtool"
)

var _ memtool.NameLister = (*Store)(nil)

// ListNames returns the names in the directory name, as the directory
// holds them: no entry is examined, so a name may be one of an entry that
// Stat reports irregular or missing (a link that leads out, a file with
// several links, one removed meanwhile). Entries the directory itself
// says are FIFOs, sockets or devices (d_type) are left out, and so are
// the store's own.
func (s *Store) ListNames(ctx context.Context, name string) ([]string, error) {
	d, err := s.openDir(ctx, name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := readNames(d)
	if err != nil {
		return nil, mapErr("readdir", name, err)
	}
	return names, nil
}

// ownEntry reports whether a directory entry is the store's own.
func ownEntry(name string) bool { return strings.HasPrefix(name, ownPrefix) }

// readNamesPortable reads the names with os.File.ReadDir, which takes
// each entry's type from the directory where the system gives it.
func readNamesPortable(d *os.File) ([]string, error) {
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if t := e.Type(); ownEntry(e.Name()) || t&(os.ModeNamedPipe|os.ModeSocket|os.ModeDevice|os.ModeCharDevice) != 0 {
			continue
		}
		out = append(out, e.Name())
	}
	return out, nil
}
