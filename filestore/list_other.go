//go:build !linux

package filestore

import (
	"context"
	"io"
	"os"
)

func readNames(ctx context.Context, d *os.File, fn func(string) bool) error {
	return readNamesPortable(ctx, d, fn)
}

// readSnapshot reads the names as readNames does, then calls fn with
// them if they are at most max (max < 0: any number); else it answers
// complete = false and calls rest with every name, read again from the
// start. It cannot tell whether the directory changed meanwhile.
func (s *Store) readSnapshot(ctx context.Context, d *os.File, max int, fn, rest func(string) bool) (complete, changed bool, err error) {
	if _, err := d.Seek(0, io.SeekStart); err != nil {
		return false, false, err
	}
	var names []string
	err = readNamesPortable(ctx, d, func(n string) bool {
		names = append(names, n)
		return max < 0 || len(names) <= max
	})
	switch {
	case err != nil:
		return false, false, err
	case max >= 0 && len(names) > max:
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			return false, false, err
		}
		return false, false, readNamesPortable(ctx, d, rest)
	}
	for _, n := range names {
		if !fn(n) {
			break
		}
	}
	return true, false, nil
}

func (s *Store) dirNames(ctx context.Context, d *os.File) (names []string, changed bool, err error) {
	if _, err := d.Seek(0, io.SeekStart); err != nil {
		return nil, false, err
	}
	names, err = d.Readdirnames(-1)
	return names, false, err
}
