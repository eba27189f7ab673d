package expiry

import (
	"context"
	"errors"

	"github.com/memtool/memtool"
)

// errIndexDamaged: the access index does not parse.
var errIndexDamaged = errors.New("the access index is damaged (it does not parse)")

// errIndexNewer: the access index is of a later format, which this
// package neither reads nor rewrites; nor does ResetIndex remove it.
var errIndexNewer = errors.New("the access index was written by a newer memtool; use that one")

// ErrIndexReadable: ResetIndex found the access index readable, and left
// it as it is.
var ErrIndexReadable = errors.New("the access index reads as it should; nothing to reset")

// ResetIndex removes the access index of inner (the store below the
// wrapper, as Collect takes it) if it cannot be read: damaged, or past its
// 64 MiB bound. Such an index records no use and makes Collect fail; once
// it is gone, uses are recorded again, and every file counts as used at
// the next Collect, so none expires early. A readable index is left as it
// is: ErrIndexReadable. A missing one is no error. An index of a later
// format (a newer memtool's) is left too, with an error that says so.
func ResetIndex(ctx context.Context, inner memtool.Store) error {
	_, err := readIndex(ctx, inner)
	if err == nil {
		if _, serr := inner.Stat(ctx, indexName); errors.Is(serr, memtool.ErrNotExist) {
			return nil
		}
		return ErrIndexReadable
	}
	if !errors.Is(err, memtool.ErrTooLarge) && !errors.Is(err, errIndexDamaged) {
		return err // the store's failure: the index may be fine
	}
	if err := inner.Remove(ctx, indexName); err != nil && !errors.Is(err, memtool.ErrNotExist) {
		return err
	}
	return nil
}
