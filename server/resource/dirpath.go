package resource

import (
	"context"

	"github.com/memtool/memtool"
)

// isDir fails unless a directory is at name: with not_dir for anything
// else, with the store's error if nothing is there. A change given a path
// that ends in '/' asks it first, as Memory's delete and rename do: the
// path names a directory, and a file at the name without the slash is not
// what the request means (DELETE notes/ must not remove a file notes).
// Like Memory's, the look and the change are two steps.
func isDir(ctx context.Context, s memtool.Store, name string) error {
	fi, err := s.Stat(ctx, name)
	if err != nil {
		return at(name, err)
	}
	if !fi.IsDir() {
		return at(name, memtool.ErrNotDir)
	}
	return nil
}
