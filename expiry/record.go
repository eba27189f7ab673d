// This file holds the reading and writing of the access index.

package expiry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memtool/memtool"
)

// record changes the index, atomically in the inner store, and returns
// the failure to, which also goes to OnError.
func (s *Store) record(ctx context.Context, change func(*index)) error {
	err := updateIndex(context.WithoutCancel(ctx), s.inner, change)
	if err != nil && s.opts.OnError != nil {
		s.opts.OnError(err)
	}
	return err
}

// updateIndex applies change to the stored index, creating it if needed.
func updateIndex(ctx context.Context, inner memtool.Store, change func(*index)) error {
	apply := func(old []byte) ([]byte, error) {
		ix, err := parseIndex(old)
		if err != nil {
			return nil, err
		}
		change(&ix)
		return json.Marshal(ix)
	}
	for {
		err := inner.Update(ctx, indexName, 64<<20, apply)
		if !errors.Is(err, memtool.ErrNotExist) {
			return err
		}
		data, err := apply(nil)
		if err != nil {
			return err
		}
		err = inner.WriteFile(ctx, indexName, data, memtool.CreateOnly)
		if !errors.Is(err, memtool.ErrExist) {
			return err // created, or failed; on ErrExist another writer won: update it
		}
	}
}

func readIndex(ctx context.Context, inner memtool.Store) (index, error) {
	data, err := inner.ReadFile(ctx, indexName, 64<<20)
	if errors.Is(err, memtool.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return index{}, err
	}
	return parseIndex(data)
}

// parseIndex reads a stored index; no data is an empty index. An index of
// a later format than indexVersion (a newer memtool's) is errIndexNewer:
// read as this format, its times could mean others, and rewritten in this
// format, it would lose what this one does not know.
func parseIndex(data []byte) (index, error) {
	ix := index{Version: indexVersion, Access: map[string]int64{}}
	if len(data) == 0 {
		return ix, nil
	}
	if err := json.Unmarshal(data, &ix); err != nil {
		return index{}, fmt.Errorf("%w: %w", errIndexDamaged, err)
	}
	if ix.Version > indexVersion {
		return index{}, fmt.Errorf("%w (format %d; this one reads format %d)", errIndexNewer, ix.Version, indexVersion)
	}
	if ix.Access == nil {
		ix.Access = map[string]int64{}
	}
	return ix, nil
}
