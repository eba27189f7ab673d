package expiry

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/memtool/memtool"
)

// The wrapper's own entries in the inner store. The path gate refuses
// names starting with ".memtool", so the model can neither see nor touch
// them, and the wrapper leaves them out of listings. A tool that copies a
// store whole (memtool migrate) carries them along.
const (
	IndexName = ".memtool-expiry.json"  // last access of every file
	TrashName = ".memtool-expiry-trash" // expired files, by gc run
)

const (
	ownPrefix = ".memtool-expiry"
	indexName = IndexName
	trashName = TrashName
	// reservedPrefix starts every name the path gate keeps from the
	// model: the store's, this wrapper's and other policies' own entries.
	reservedPrefix = ".memtool"
)

// Options configure the tracking wrapper. nil means the defaults.
type Options struct {
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Resolution is how stale a recorded access may get before a read
	// or a write records a new one, so that using a file does not write
	// the index every time. Default one hour (DefaultResolution). Collect
	// must be told the largest Resolution of the wrappers on a store.
	Resolution time.Duration
	// OnError receives failures to record an access. The operation
	// itself goes on, but for a change whose failure to record would
	// leave an earlier use of its name (see the package doc). Default:
	// ignored.
	OnError func(error)
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// DefaultResolution is the Resolution of Options and CollectOptions.
const DefaultResolution = time.Hour

// indexVersion is the format of the index this package writes.
const indexVersion = 1

// index is the stored record of last accesses: clean names → Unix seconds.
type index struct {
	Version int              `json:"version"`
	Access  map[string]int64 `json:"access"`
}

// use records an access of name at now. It never moves an access back:
// a process whose clock is behind would otherwise replace a later use,
// recorded by another, with an earlier one, and the file could expire
// while in use. It always changes the index, so that Collect, which
// compares the access it read before its moves with the one after,
// sees the use (one second after the recorded access, at the least).
func (ix *index) use(name string, now int64) {
	if last, ok := ix.Access[name]; ok && now <= last {
		now = last + 1
	}
	ix.Access[name] = now
}

// Store wraps a memtool.Store and records when each file was last read or
// written, in the store itself. Use New.
type Store struct {
	memtool.Forwarder // Rename and RemoveAll are the Store's own
	inner             memtool.Store
	opts              Options
	mu                sync.Mutex
	seen              map[string]int64 // what this process last recorded, by name
}

// New wraps inner. opts may be nil. The result is a memtool.Wrapper: it
// forwards the optional capabilities of inner, and Tenant returns the
// tenant's store, whose access index is kept inside that tenant.
func New(inner memtool.Store, opts *Options) memtool.Store {
	s := &Store{inner: inner, seen: map[string]int64{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Resolution <= 0 {
		s.opts.Resolution = DefaultResolution
	}
	s.Forwarder = memtool.Forward(inner, func(t memtool.Store, _ string) memtool.Store { return New(t, &s.opts) })
	return s
}

var _ memtool.Wrapper = (*Store)(nil)

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return s.inner.Stat(ctx, name)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := s.inner.ReadDir(ctx, name)
	if name == "" {
		entries = hideOwn(entries)
	}
	return entries, err
}

func hideOwn(entries []memtool.FileInfo) []memtool.FileInfo {
	out := entries[:0]
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, ownPrefix) {
			out = append(out, e)
		}
	}
	return out
}

// ReadFile records the read as a use of name, unless a search made it
// (memtool.IsSearchRead): finding a file is not using it, and a search
// without an index reads every file. A read that records a use then
// looks whether the file is still there (a read of none of its bytes),
// and answers memtool.ErrNotExist if it is not: a Collect that moved it
// to the trash meanwhile may have missed the use, and keeps it there. If
// it is there, any Collect that moves it later finds the use recorded and
// puts it back, so a file whose content was answered is never expired
// under the reader.
func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, err := s.inner.ReadFile(ctx, name, limit)
	if err != nil || memtool.IsSearchRead(ctx) || !s.touch(ctx, name) {
		return data, err
	}
	_, perr := s.inner.ReadFile(ctx, name, 0)
	if errors.Is(perr, memtool.ErrNotExist) || errors.Is(perr, memtool.ErrIsDir) || errors.Is(perr, memtool.ErrIrregular) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: memtool.ErrNotExist}
	}
	return data, nil
}

// WriteFile records the write as a use of name before it writes, so that
// a Collect that moves the file to the trash after the write finds the
// use recorded (and puts the file back), however the two interleave. A
// write whose use cannot be recorded over an earlier one fails, writing
// nothing (see unrecorded).
func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := s.recordChange(ctx, name); err != nil {
		return err // see unrecorded
	}
	return s.inner.WriteFile(ctx, name, data, mode)
}

// Update records the edit as a use of name before it edits (see
// WriteFile, also for one that cannot be recorded). An edit that finds
// no file there takes the use back if it was the name's first and no one
// has recorded another since (see recordUse): edits of names that hold
// no file would otherwise fill the index, which no quota counts.
func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	undo, err := s.recordChange(ctx, name)
	if err != nil {
		return err // see unrecorded
	}
	err = s.inner.Update(ctx, name, limit, fn)
	if undo != nil && errors.Is(err, memtool.ErrNotExist) {
		undo()
	}
	return err
}

func (s *Store) Mkdir(ctx context.Context, name string) error { return s.inner.Mkdir(ctx, name) }

// Remove forgets the recorded accesses of what it removed, so that a
// file written there later does not inherit them: if recording that
// file's own use fails, it has none, and counts as used at the next
// Collect, instead of as unused since the removed file's last use. An
// error that leaves the outcome unknown forgets them too: a file without
// an access is never taken for an unused one.
func (s *Store) Remove(ctx context.Context, name string) error {
	err := s.inner.Remove(ctx, name)
	if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		s.forget(ctx, name)
	}
	return err
}

// RemoveAll forwards to the inner store's RemoveAller, and forgets the
// accesses of what it removed (see Remove).
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	err := memtool.ForwardRemoveAll(ctx, s.inner, name)
	if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		s.forget(ctx, name)
	}
	return err
}

// forget drops the recorded accesses of name and everything below it,
// writing the index only if it holds one.
func (s *Store) forget(ctx context.Context, name string) {
	if reserved(name) {
		return // never recorded
	}
	below := func(n string) bool { return n == name || strings.HasPrefix(n, name+"/") }
	s.mu.Lock()
	for n := range s.seen {
		if below(n) {
			delete(s.seen, n)
		}
	}
	s.mu.Unlock()
	err := s.inner.Update(context.WithoutCancel(ctx), indexName, 64<<20, func(old []byte) ([]byte, error) {
		if len(old) == 0 {
			return nil, errNothingToForget
		}
		ix, err := parseIndex(old)
		if err != nil {
			return nil, err
		}
		n := len(ix.Access)
		maps.DeleteFunc(ix.Access, func(k string, _ int64) bool { return below(k) })
		if len(ix.Access) == n {
			return nil, errNothingToForget
		}
		return json.Marshal(ix)
	})
	if err != nil && err != errNothingToForget && !errors.Is(err, memtool.ErrNotExist) && s.opts.OnError != nil {
		s.opts.OnError(err)
	}
}

// errNothingToForget leaves the index as it is.
var errNothingToForget = errors.New("no access to forget")

// rename moves the recorded accesses along with the entries; renaming is a
// use of the files moved. Like a write, it records the use at newname
// before it renames (see WriteFile): a Collect must not take a file
// renamed into place for an earlier file's stale access there. A rename
// that fails moved nothing: those uses are taken back, where no one has
// recorded another since, so that the files in the way (the rename found
// newname taken) do not count as used. A rename into a policy's own files
// (package history's delete) forgets what it moved, as a removal does,
// and one among them (history moving a deleted file into its versions)
// leaves the index alone: it records none of them. A rename whose use
// cannot be recorded fails, moving nothing, where the index holds a use
// at or below newname (see unrecorded).
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if reserved(newname) {
		err := memtool.ForwardRename(ctx, s.inner, oldname, newname)
		if err == nil {
			s.forget(ctx, oldname) // writes the index only if it held an access
		}
		return err
	}
	now := s.opts.now().Unix()
	var before, after map[string]int64 // the recorded uses, and what they were (absent: -1)
	err := s.record(ctx, func(ix *index) {
		before, after = map[string]int64{}, map[string]int64{}
		use := func(name string) {
			last, ok := ix.Access[name]
			if !ok {
				last = -1
			}
			ix.use(name, now)
			before[name], after[name] = last, ix.Access[name]
		}
		for name := range ix.Access {
			if name == newname || strings.HasPrefix(name, newname+"/") {
				use(name)
			}
		}
		use(newname)
	})
	if err != nil {
		if err := s.unrecorded(ctx, newname, err); err != nil {
			return err
		}
		before, after = nil, nil // nothing to take back
	}
	err = memtool.ForwardRename(ctx, s.inner, oldname, newname)
	if err != nil {
		if len(after) > 0 {
			s.record(ctx, func(ix *index) {
				for name, t := range after {
					switch last := before[name]; {
					case ix.Access[name] != t: // used again since
					case last < 0:
						delete(ix.Access, name)
					default:
						ix.Access[name] = last
					}
				}
			})
		}
		return err
	}
	s.record(ctx, func(ix *index) {
		for name := range ix.Access {
			if name == oldname || strings.HasPrefix(name, oldname+"/") {
				delete(ix.Access, name)
				ix.use(newname+strings.TrimPrefix(name, oldname), now)
			}
		}
		ix.use(newname, now)
	})
	return nil
}

// reserved reports whether name is one of the files the policies keep
// for themselves (history's versions, this index): they are never
// collected, so their uses are not recorded.
func reserved(name string) bool { return strings.HasPrefix(name, reservedPrefix) }

// walkFiles calls fn for every regular file under dir, with memtool.Walk.
// At the root it leaves out every name starting with ".memtool", and does
// not walk into it: no memory is there (the path gate refuses such names),
// only what the store and the policies keep for themselves (this wrapper's
// index and trash, package history's versions, memtool's policy record),
// which some stores list.
func walkFiles(ctx context.Context, s memtool.Store, dir string, fn func(name string, fi memtool.FileInfo) error) error {
	return memtool.Walk(ctx, s, dir, func(name string, fi memtool.FileInfo) error {
		switch {
		case dir == "" && reserved(name):
			return fs.SkipDir
		case fi.IsRegular():
			return fn(name, fi)
		}
		return nil
	})
}

// SearchFiles forwards to the index of the wrapped store
// (memtool.Searcher), leaving out this policy's own entries.
func (s *Store) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(name string, data []byte) error) error {
	return memtool.ForwardSearchFiles(ctx, s.inner, dir, q, func(name string, data []byte) error {
		if strings.HasPrefix(name, ownPrefix) {
			return nil
		}
		return fn(name, data)
	})
}
