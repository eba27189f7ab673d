package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/memtool/memtool"
)

// DirName is the wrapper's own entry in the root of the inner store, which
// the path gate keeps from the model, for tools that copy a store whole.
// Under it: one directory per file path, named by a hash of it (see
// versions.go), and the trash, where a deleted file or directory waits
// until its files have become versions (see delete.go).
const DirName = ".memtool-history"

// ownPrefix starts the names of the root entries the wrapper hides.
const ownPrefix = DirName

// maxAttempts bounds how often a change starts over because another
// process changed the file between reading it and changing it.
const maxAttempts = 100

// Options bound what is kept. nil means the defaults.
type Options struct {
	// MaxVersions is the most earlier versions kept per file. Default 20.
	MaxVersions int
	// MaxAge: versions older than this are dropped. Default 30 days; a
	// negative value keeps them for ever (within MaxVersions).
	MaxAge time.Duration
	// MaxBytes is the most bytes that the versions of all the store's
	// files hold (of one tenant's, in a tenant's store), as the store
	// below reports their sizes. A change that takes them past it drops
	// the oldest versions, of any file, until they hold nine tenths of
	// it; the version it kept, and newer ones, stay (a single version
	// larger than MaxBytes stays until a newer one is kept). Default
	// DefaultMaxBytes; a negative value: no bound.
	MaxBytes int64
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// OnError receives failures of the work that follows a change that
	// has succeeded: pruning old versions, and turning deleted files into
	// versions (what is left waits in the trash for the next delete or
	// edit to finish the job). Default: ignored.
	OnError func(error)
}

// Store wraps a memtool.Store and keeps the previous version of every file
// that is replaced, edited or removed. Use New.
type Store struct {
	memtool.Forwarder // Rename and RemoveAll are the Store's own
	inner             memtool.Store
	// renamer is inner's atomic rename, nil if it has none: deletes
	// then go through a tombstone (delete.go).
	renamer memtool.Renamer
	opts    Options
	// mu serialises this wrapper's changes, so that they do not make
	// each other start over; other processes are another matter.
	mu sync.Mutex
}

// New wraps inner. opts may be nil. The result is a memtool.Wrapper: it
// forwards the optional capabilities of inner, and Tenant returns the
// tenant's store, whose versions are kept inside that tenant.
func New(inner memtool.Store, opts *Options) memtool.Store {
	return newStore(inner, opts)
}

func newStore(inner memtool.Store, opts *Options) *Store {
	s := &Store{inner: inner}
	if memtool.Has[memtool.Renamer](inner) {
		s.renamer = inner.(memtool.Renamer)
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxVersions <= 0 {
		s.opts.MaxVersions = 20
	}
	if s.opts.MaxBytes == 0 {
		s.opts.MaxBytes = DefaultMaxBytes
	}
	if s.opts.MaxAge == 0 {
		s.opts.MaxAge = 30 * 24 * time.Hour
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.Forwarder = memtool.Forward(inner, func(t memtool.Store, _ string) memtool.Store { return newStore(t, &s.opts) })
	return s
}

var _ memtool.Wrapper = (*Store)(nil)

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	fi, err := s.inner.Stat(ctx, name)
	if err == nil && s.isTombstoneAt(ctx, name, fi) {
		return memtool.FileInfo{}, notExist("stat", name)
	}
	return fi, err
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, err := s.inner.ReadFile(ctx, name, limit)
	if err == nil && s.renamer == nil && isTombstone(data) {
		return nil, notExist("read", name)
	}
	return data, err
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := s.inner.ReadDir(ctx, name)
	out := entries[:0]
	for _, e := range entries {
		if name == "" && strings.HasPrefix(e.Name, ownPrefix) || s.isTombstoneAt(ctx, path.Join(name, e.Name), e) {
			continue
		}
		out = append(out, e)
	}
	return out, err
}

func (s *Store) Mkdir(ctx context.Context, name string) error { return s.inner.Mkdir(ctx, name) }

// rename changes no content: nothing to keep.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if s.renamer == nil {
		return memtool.Unsupported("rename", oldname)
	}
	return s.renamer.Rename(ctx, oldname, newname)
}

// WriteFile keeps the content it replaces. A write over a file is an update
// conditional on the content that was kept, and a write where nothing is
// creates only, so that a file another process puts there meanwhile is
// never replaced unseen. A write of the content the file holds keeps
// nothing (as an edit that changes nothing).
func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if reserved(name) {
		return s.inner.WriteFile(ctx, name, data, mode)
	}
	if isTombstone(data) {
		return errTombstoneContent
	}
	if mode == memtool.CreateOnly {
		err := s.inner.WriteFile(ctx, name, data, mode)
		if errors.Is(err, memtool.ErrExist) && s.renamer == nil {
			if cur, rerr := s.inner.ReadFile(ctx, name, int64(tombstoneLen)); rerr == nil && isTombstone(cur) {
				if terr := s.replaceTombstone(ctx, name, cur, data); !errors.Is(terr, errChanged) {
					return terr
				}
			}
		}
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for range maxAttempts {
		old, err := s.inner.ReadFile(ctx, name, 1<<40)
		switch {
		case errors.Is(err, memtool.ErrNotExist):
			err := s.inner.WriteFile(ctx, name, data, memtool.CreateOnly)
			if errors.Is(err, memtool.ErrExist) {
				continue // created meanwhile: keep that first
			}
			return err
		case err != nil:
			return err // a directory, an irregular file…: the inner store's answer
		case s.renamer == nil && isTombstone(old):
			if err := s.replaceTombstone(ctx, name, old, data); !errors.Is(err, errChanged) {
				return err
			}
			continue
		}
		write := func() error { return s.inner.Update(ctx, name, 1<<40, ifUnchanged(old, content(data))) }
		if bytes.Equal(old, data) {
			err = write() // replaces nothing: nothing to keep
		} else {
			err = s.saveThen(ctx, name, old, "write", write)
		}
		if !errors.Is(err, errChanged) && !errors.Is(err, memtool.ErrNotExist) {
			return err
		}
	}
	return busy("write", name)
}

// Update keeps the content it edits: it saves the content it read as a
// version, then updates only if the file still holds that content; if
// another process changed it meanwhile, it drops the version and starts
// over.
func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if reserved(name) {
		return s.inner.Update(ctx, name, limit, fn)
	}
	edit := func(old []byte) ([]byte, error) {
		data, err := fn(old)
		if err == nil && isTombstone(data) {
			err = errTombstoneContent
		}
		return data, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for range maxAttempts {
		old, err := s.ReadFile(ctx, name, limit)
		if err != nil {
			return err // missing, too large, a directory…: the errors of ReadFile
		}
		// An edit that fails keeps nothing, so try it before saving
		// (fn may be called more than once); nor does one that changes
		// nothing, which the store would not write either.
		data, err := edit(old)
		if err != nil {
			return err
		}
		if bytes.Equal(data, old) {
			return nil
		}
		err = s.saveThen(ctx, name, old, "update", func() error {
			return s.inner.Update(ctx, name, limit, ifUnchanged(old, edit))
		})
		if !errors.Is(err, errChanged) {
			return err
		}
	}
	return busy("update", name)
}

// reserved reports whether name is one of the entries that the store and
// the policies keep for themselves (package expiry's access index and
// trash, this wrapper's own files…): their names start with ".memtool",
// which the path gate refuses to the model and Versions cannot name, so
// no version of them could ever be read, and each would count against
// MaxBytes, pushing the memory's own versions out. They keep none.
func reserved(name string) bool { return strings.HasPrefix(name, reservedPrefix) }

// reservedPrefix starts the names of the entries that are no memory.
const reservedPrefix = ".memtool"

// errChanged: the file no longer holds the content that was saved.
var errChanged = errors.New("changed since it was saved")

// ifUnchanged returns an update function that applies fn only if the file
// still holds old.
func ifUnchanged(old []byte, fn func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(cur []byte) ([]byte, error) {
		if !bytes.Equal(cur, old) {
			return nil, errChanged
		}
		return fn(cur)
	}
}

// content returns an update function that writes data.
func content(data []byte) func([]byte) ([]byte, error) {
	return func([]byte) ([]byte, error) { return data, nil }
}

// saveThen keeps old as a version of name, then runs change; if change
// fails, or panics (an edit's function may), the version is removed again
// (see failed), so that a failed operation leaves nothing behind.
//
// It first finishes the deletes waiting in the trash (sweep): a delete
// takes effect with its move into the trash and numbers its versions
// after, so one that another process has moved and not yet numbered (or
// that died in between) replaced its content before this change, and
// must number it before this change takes its number.
func (s *Store) saveThen(ctx context.Context, name string, old []byte, op string, change func() error) error {
	s.sweep(ctx)
	v, err := s.save(ctx, name, old, op)
	if err != nil {
		return err
	}
	err = errPanicked
	defer func() {
		if err == errPanicked {
			s.failed(ctx, name, v, old, err)
		}
	}()
	if err = change(); err != nil {
		s.failed(ctx, name, v, old, err)
		return err
	}
	s.prune(ctx, name, v)
	return nil
}

// errPanicked: the change panicked.
var errPanicked = errors.New("panicked")

// failed drops the version v of old, saved for a change of name that
// failed with err, if the change did not take effect: the update found
// the file changed or gone, or the file still holds old. A store may
// answer an error for a change it made (an fsync that failed after the
// rename, a commit whose answer the network lost); then the version
// stays, since the content it holds may be replaced.
func (s *Store) failed(ctx context.Context, name, v string, old []byte, err error) {
	if errors.Is(err, errChanged) || errors.Is(err, memtool.ErrNotExist) || s.holds(ctx, name, old) {
		s.drop(ctx, v)
	}
}

// holds reports whether the file at name in the inner store holds data.
func (s *Store) holds(ctx context.Context, name string, data []byte) bool {
	cur, err := s.inner.ReadFile(context.WithoutCancel(ctx), name, int64(len(data)))
	return err == nil && bytes.Equal(cur, data)
}

func notExist(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: memtool.ErrNotExist}
}

func busy(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("changed by another process %d times in a row: %w", maxAttempts, memtool.ErrBusy)}
}

// report hands a failure of follow-up work to OnError.
func (s *Store) report(err error) {
	if err != nil && s.opts.OnError != nil {
		s.opts.OnError(err)
	}
}
