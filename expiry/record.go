// This file holds the recording of uses in the access index.

package expiry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/memtool/memtool"
)

// touch records an access of name now, unless this process recorded one
// less than Resolution ago: the index is as precise as Resolution. It
// reports whether it recorded one now.
func (s *Store) touch(ctx context.Context, name string) bool {
	return s.recordUse(ctx, name) != nil
}

// recordUse is touch, returning, if it recorded a use, what takes it
// back: the access name had before, unless another was recorded since.
func (s *Store) recordUse(ctx context.Context, name string) (undo func()) {
	if reserved(name) {
		return nil
	}
	now := s.opts.now().Unix()
	if s.freshAt(name, now) {
		return nil
	}
	var last, recorded int64 // last is -1 if name had none
	if !s.record(ctx, func(ix *index) {
		var ok bool
		if last, ok = ix.Access[name]; !ok {
			last = -1
		}
		ix.use(name, now)
		recorded = ix.Access[name]
	}) {
		return nil // not recorded: the next use tries again
	}
	s.mu.Lock()
	s.seen[name] = now
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.seen[name] == now {
			delete(s.seen, name)
		}
		s.mu.Unlock()
		s.record(ctx, func(ix *index) {
			switch {
			case ix.Access[name] != recorded: // used again since
			case last < 0:
				delete(ix.Access, name)
			default:
				ix.Access[name] = last
			}
		})
	}
}

// freshAt reports whether this process recorded a use of name less than
// Resolution before now, so that a use now need not be recorded.
func (s *Store) freshAt(name string, now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.seen[name]
	return ok && now-last < int64(s.opts.Resolution/time.Second) && now >= last
}

// record changes the index, atomically in the inner store, and reports
// whether it did. A failure goes to OnError: the operation it records has
// happened.
func (s *Store) record(ctx context.Context, change func(*index)) bool {
	err := updateIndex(context.WithoutCancel(ctx), s.inner, change)
	if err != nil && s.opts.OnError != nil {
		s.opts.OnError(err)
	}
	return err == nil
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
