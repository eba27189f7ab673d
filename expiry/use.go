package expiry

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/memtool/memtool"
)

// touch records an access of name now, unless this process recorded one
// less than Resolution ago: the index is as precise as Resolution. It
// reports whether it recorded one now.
func (s *Store) touch(ctx context.Context, name string) bool {
	undo, _ := s.recordUse(ctx, name)
	return undo != nil
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
//
// err is the failure to record the use. A read goes on; a change asks
// recordChange.
func (s *Store) recordUse(ctx context.Context, name string) (undo func(), err error) {
	if reserved(name) {
		return nil, nil
	}
	now := s.opts.now().Unix()
	if s.freshAt(name, now) {
		return nil, nil
	}
	var last, recorded int64 // last is -1 if name had none
	if err := s.record(ctx, func(ix *index) {
		var ok bool
		if last, ok = ix.Access[name]; !ok {
			last = -1
		}
		ix.use(name, now)
		recorded = ix.Access[name]
	}); err != nil {
		return nil, err // the next use tries again
	}
	s.mu.Lock()
	s.seen[name] = now
	s.mu.Unlock()
	if last >= 0 {
		return func() {}, nil
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
	}, nil
}

// recordChange is recordUse for a change of name: err is not nil if the
// use could not be recorded and the index holds an older one of name
// (see unrecorded), which the change would leave its file to expire by.
func (s *Store) recordChange(ctx context.Context, name string) (undo func(), err error) {
	undo, err = s.recordUse(ctx, name)
	if err != nil {
		return nil, s.unrecorded(ctx, name, err)
	}
	return undo, nil
}

// unrecorded is the answer to a change of name (a write, an edit, a
// rename to it) whose use could not be recorded (err, such as a full
// disk, which may leave room for the file and none for the index): err,
// so that nothing changes, if the index holds a use of name or of a name
// below it, which Collect would take for the last use of what the change
// puts there, expiring it early; else nil, and the change goes on: a file
// without a recorded use counts as used at the next Collect. An index
// that does not read as one (damaged, too large, of a newer format) makes
// Collect fail, expiring nothing, and the change goes on too.
func (s *Store) unrecorded(ctx context.Context, name string, err error) error {
	ix, rerr := readIndex(context.WithoutCancel(ctx), s.inner)
	switch {
	case errors.Is(rerr, errIndexDamaged) || errors.Is(rerr, errIndexNewer) || errors.Is(rerr, memtool.ErrTooLarge):
		return nil
	case rerr != nil:
		return err // what the index holds is unknown
	}
	for n := range ix.Access {
		if n == name || strings.HasPrefix(n, name+"/") {
			return err
		}
	}
	return nil
}

// freshAt reports whether this process recorded a use of name less than
// Resolution before now, so that a use now need not be recorded.
func (s *Store) freshAt(name string, now int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.seen[name]
	return ok && now-last < int64(s.opts.Resolution/time.Second) && now >= last
}
