package expiry

import (
	"context"
	"time"
)

// touch records an access of name now, unless this process recorded one
// less than Resolution ago: the index is as precise as Resolution. It
// reports whether it recorded one now.
func (s *Store) touch(ctx context.Context, name string) bool {
	return s.recordUse(ctx, name) != nil
}

// recordUse is touch, returning, if it recorded the first use of name in
// the index, what takes it back, unless another was recorded since. A use
// over an older one is never taken back: a file made at name meanwhile
// (name removed, which forgets its use, and written again in the same
// second; or written by this process, which records no use within
// Resolution of this one) may hold this use as its own, and given the
// older one back, it would be expired as unused for that long. Taken
// back, a use that was another's leaves the file with none, and Collect
// counts it as used at its run.
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
	if last >= 0 {
		return func() {}
	}
	return func() {
		s.mu.Lock()
		if s.seen[name] == now {
			delete(s.seen, name)
		}
		s.mu.Unlock()
		s.record(ctx, func(ix *index) {
			if ix.Access[name] == recorded { // else used again since
				delete(ix.Access, name)
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
