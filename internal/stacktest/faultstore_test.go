package stacktest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/memtool/memtool"
)

// A faultMode says how the call a faultStore fails goes wrong.
type faultMode int

const (
	// failBefore: the call returns an error and does nothing (a store
	// that refused or could not reach its storage). Every call counts.
	failBefore faultMode = iota
	// loseAnswer: the call is made, then answered with an error wrapping
	// memtool.ErrOutcomeUnknown (a remote store whose answer was lost).
	// Only changes count.
	loseAnswer
	// failAfterFn: an Update runs fn, then fails without storing its
	// result (a commit that failed). Only updates count.
	failAfterFn
	// cancel: the context of the command is cancelled just before the
	// call, which then runs with it (the store honours it, or not).
	// Every call counts.
	cancel
)

func (m faultMode) String() string {
	return [...]string{"before", "lost", "after-fn", "cancel"}[m]
}

var errInjected = errors.New("injected fault")

// A faultStore forwards every call to a real store, with the
// capabilities that store has (as a Wrapper over it), and fails the
// at-th call that its mode counts, once it is armed.
type faultStore struct {
	memtool.Forwarder // Tenant and Tenants; Rename and RemoveAll are its own
	base              memtool.Store

	mu    sync.Mutex
	armed bool
	mode  faultMode
	at    int                        // the counted call that fails, from 1
	match func(op, name string) bool // if set, only the calls it matches count
	// stop cancels the command's context, for the mode cancel.
	stop context.CancelFunc
	seen int    // the counted calls seen while armed
	hit  string // the call that failed, for messages
}

func newFaultStore(base memtool.Store) *faultStore {
	return &faultStore{Forwarder: memtool.Forward(base, nil), base: base}
}

var _ memtool.Wrapper = (*faultStore)(nil)

// arm makes the at-th call that mode counts fail; at 0 fails none, and
// only counts.
func (f *faultStore) arm(mode faultMode, at int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.mode, f.at, f.seen, f.hit, f.match = true, mode, at, 0, "", nil
}

// armOn is arm counting only the calls that match op and name.
func (f *faultStore) armOn(mode faultMode, at int, op, name string) {
	f.arm(mode, at)
	f.mu.Lock()
	f.match = func(o, n string) bool { return o == op && n == name }
	f.mu.Unlock()
}

// disarm stops counting and reports how many calls were counted and the
// one that failed ("" if none).
func (f *faultStore) disarm() (seen int, hit string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
	return f.seen, f.hit
}

// fails reports whether this call is the one to fail.
func (f *faultStore) fails(op, name string, change, update bool) (faultMode, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed {
		return 0, false
	}
	if f.match != nil && !f.match(op, name) {
		return 0, false
	}
	switch f.mode {
	case loseAnswer:
		if !change {
			return 0, false
		}
	case failAfterFn:
		if !update {
			return 0, false
		}
	}
	f.seen++
	if f.seen != f.at {
		return 0, false
	}
	f.hit = fmt.Sprintf("%s %s (call %d)", op, name, f.seen)
	if f.mode == cancel {
		f.stop()
		return f.mode, false // the call runs, with its context cancelled
	}
	return f.mode, true
}

func injected(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: errInjected}
}

func lost(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (injected)", memtool.ErrOutcomeUnknown)}
}

// change runs a change, failing it as the mode says if it is the one.
func (f *faultStore) change(op, name string, do func() error) error {
	mode, fail := f.fails(op, name, true, false)
	if !fail {
		return do()
	}
	if mode == failBefore {
		return injected(op, name)
	}
	if err := do(); err != nil {
		return err // failed anyway: the answer is the store's
	}
	return lost(op, name)
}

func (f *faultStore) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if _, fail := f.fails("stat", name, false, false); fail {
		return memtool.FileInfo{}, injected("stat", name)
	}
	return f.base.Stat(ctx, name)
}

func (f *faultStore) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if _, fail := f.fails("read", name, false, false); fail {
		return nil, injected("read", name)
	}
	return f.base.ReadFile(ctx, name, limit)
}

func (f *faultStore) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if _, fail := f.fails("readdir", name, false, false); fail {
		return nil, injected("readdir", name)
	}
	return f.base.ReadDir(ctx, name)
}

func (f *faultStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return f.change("write", name, func() error { return f.base.WriteFile(ctx, name, data, mode) })
}

func (f *faultStore) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	mode, fail := f.fails("update", name, true, true)
	switch {
	case !fail:
		return f.base.Update(ctx, name, limit, fn)
	case mode == failBefore:
		return injected("update", name)
	case mode == loseAnswer:
		if err := f.base.Update(ctx, name, limit, fn); err != nil {
			return err
		}
		return lost("update", name)
	}
	// failAfterFn: fn runs on the stored content, and its result is
	// thrown away.
	var fnErr error
	err := f.base.Update(ctx, name, limit, func(old []byte) ([]byte, error) {
		if _, fnErr = fn(old); fnErr != nil {
			return nil, fnErr
		}
		return nil, errInjected
	})
	if fnErr != nil || !errors.Is(err, errInjected) {
		return err
	}
	return injected("update", name)
}

func (f *faultStore) Mkdir(ctx context.Context, name string) error {
	return f.change("mkdir", name, func() error { return f.base.Mkdir(ctx, name) })
}

func (f *faultStore) Remove(ctx context.Context, name string) error {
	return f.change("remove", name, func() error { return f.base.Remove(ctx, name) })
}

func (f *faultStore) Rename(ctx context.Context, oldname, newname string) error {
	if !memtool.Has[memtool.Renamer](f.base) {
		return memtool.Unsupported("rename", oldname)
	}
	return f.change("rename", oldname, func() error { return memtool.ForwardRename(ctx, f.base, oldname, newname) })
}

func (f *faultStore) RemoveAll(ctx context.Context, name string) error {
	if !memtool.Has[memtool.RemoveAller](f.base) {
		return memtool.Unsupported("removeall", name)
	}
	return f.change("removeall", name, func() error { return memtool.ForwardRemoveAll(ctx, f.base, name) })
}

// The clocks of the fault tests: the memory is made at setupTime, and
// the commands run 40 days later (collectClock: a day before).
var (
	setupTime    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	setupClock   = func() time.Time { return setupTime }
	collectClock = func() time.Time { return setupTime.Add(39 * 24 * time.Hour) }
	runClock     = func() time.Time { return setupTime.Add(40 * 24 * time.Hour) }
)
