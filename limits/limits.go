package limits

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenantlock"
)

// Options are the limits. A zero field means no limit.
type Options struct {
	// MaxFileSize is the largest a file may become, in bytes.
	MaxFileSize int64
	// MaxFiles is the most entries the store may hold: files and
	// directories, so that empty directories cannot get round it.
	MaxFiles int64
	// MaxBytes is the most bytes all files of the store may hold together.
	MaxBytes int64
	// MaxPathLength is the longest virtual path (/memories/…), in bytes.
	MaxPathLength int
	// MaxDepth is the most names below /memories (/memories/a/b is 2).
	MaxDepth int
}

// The limits, as Error.Limit names them.
const (
	FileSize   = "file size"
	Files      = "files"
	Bytes      = "store size"
	PathLength = "path length"
	Depth      = "depth"
)

// An Error is an operation refused because it would cross a limit. The
// store is unchanged.
type Error struct {
	Limit string // FileSize, Files, Bytes, PathLength or Depth
	Path  string // the virtual path of the entry concerned
	Got   int64  // the value the operation would reach
	Max   int64  // the limit
	msg   string
}

func (e *Error) Error() string { return e.msg }

// Unwrap makes the error a memtool.Refusal, whose text memtool.Memory
// shows the model verbatim.
func (e *Error) Unwrap() error { return memtool.Refusal(e.msg) }

func refuse(limit, vpath string, got, limitValue int64, unit string) *Error {
	over := got - limitValue
	var what string
	switch limit {
	case FileSize:
		what = fmt.Sprintf("%s would be %s", vpath, count(got, unit))
	case Files:
		what = fmt.Sprintf("The store would hold %s", count(got, unit))
	case Bytes:
		what = fmt.Sprintf("The store would hold %s", count(got, unit))
	case PathLength:
		what = fmt.Sprintf("The path %s is %s long", vpath, count(got, unit))
	case Depth:
		what = fmt.Sprintf("The path %s is %s deep", vpath, count(got, unit))
	}
	msg := fmt.Sprintf("Limit exceeded (%s): %s, %s over the limit of %s. Nothing was changed.",
		limit, what, count(over, unit), count(limitValue, unit))
	return &Error{Limit: limit, Path: vpath, Got: got, Max: limitValue, msg: msg}
}

// count formats n with thousands separators and its unit, singular for 1.
func count(n int64, unit string) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n != 1 {
		unit = plural(unit)
	}
	return s + " " + unit
}

func plural(unit string) string {
	switch unit {
	case "file or directory":
		return "files and directories"
	}
	return unit + "s"
}

// Store wraps a memtool.Store and refuses operations that would cross a
// limit. Use New.
type Store struct {
	memtool.Forwarder   // Rename is the Store's own
	memtool.ReadThrough // reads pass through unchanged (Stat, ReadFile, ReadDir and the cheap ways)
	inner               memtool.Store
	opts                Options
	// mu serialises the operations that may grow the store, so that the
	// usage a check sees is still the usage when the write happens, and
	// keeps renames and the making of entries apart (see tenantLock). The
	// stores Tenant returns for one tenant share one.
	mu *tenantLock
}

// New wraps inner. opts may be nil (no limits). The result is a
// memtool.Wrapper: it forwards the optional capabilities of inner, and
// Tenant returns the tenant's store with the same limits, counted in that
// tenant alone.
func New(inner memtool.Store, opts *Options) memtool.Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	return newStore(inner, o, new(tenantLock), tenantlock.New[tenantLock]())
}

func newStore(inner memtool.Store, opts Options, mu *tenantLock, tenants *tenantlock.Locks[tenantLock]) *Store {
	s := &Store{inner: inner, opts: opts, mu: mu}
	s.Forwarder = memtool.Forward(inner, func(t memtool.Store, id string) memtool.Store {
		return newStore(t, opts, tenants.Get(id), tenants)
	})
	s.ReadThrough = memtool.PassReads(inner)
	return s
}

// A tenantLock serialises the growing operations of one tenant's stores,
// however many stores Tenant made for it (tenantlock), so that two
// writes through two of them cannot both pass the check.
type tenantLock struct {
	sync.Mutex
	// moving is held by a rename, with the path limits on, from its check
	// of the entries it moves until they are moved, and shared by the
	// operations that make entries, so that none is made in the tree
	// unchecked. It is taken before the Mutex.
	moving sync.RWMutex
}

var _ memtool.Wrapper = (*Store)(nil)

func (s *Store) Remove(ctx context.Context, name string) error {
	return s.inner.Remove(ctx, name)
}

// counting reports whether the store-wide limits are on, which need the
// usage of the whole store.
func (s *Store) counting() bool { return s.opts.MaxFiles > 0 || s.opts.MaxBytes > 0 }

// checkingPaths reports whether the path limits are on, which a rename
// checks for every entry it moves.
func (s *Store) checkingPaths() bool { return s.opts.MaxPathLength > 0 || s.opts.MaxDepth > 0 }

// makeEntry checks the path of an entry a write or Mkdir is about to
// make at name and, with the path limits on, keeps renames out until the
// returned done is called (see Rename).
func (s *Store) makeEntry(ctx context.Context, name string) (done func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkPath(name, name); err != nil {
		return nil, err
	}
	if !s.checkingPaths() {
		return func() {}, nil
	}
	s.mu.moving.RLock()
	return s.mu.moving.RUnlock, nil
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	done, err := s.makeEntry(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	if !s.counting() {
		return s.write(ctx, name, data, mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := s.inner.Stat(ctx, name)
	switch {
	case err == nil && (mode == memtool.CreateOnly || !fi.IsRegular()):
		// The write fails at this instant, as the inner store would
		// answer. Asking it instead would let a delete that lands
		// meanwhile (removes are not serialised) make it a write that
		// no limit was checked for.
		return cannotWrite(name, fi, mode)
	case err != nil && !errors.Is(err, memtool.ErrNotExist):
		return err
	}
	// The old file's size is the walk's, so that it is taken off only if
	// the walk counted it: a delete that lands after the Stat leaves it
	// out of both. The walk names each entry by its real path, not
	// through a directory link (see memtool.Walk), so the file is looked
	// for there.
	u, old, err := s.usageAt(ctx, memtool.ResolveName(ctx, s.inner, name))
	if err != nil {
		return err
	}
	files, oldSize, size := int64(1), int64(0), int64(len(data))
	if old != nil && old.IsRegular() {
		files, oldSize = 0, old.Size
	}
	if err := s.checkFileSize(name, oldSize, size); err != nil {
		return err
	}
	if err := s.checkGrowth(u, name, files, size-oldSize); err != nil {
		return err
	}
	return s.write(ctx, name, data, mode)
}

// write writes data at name. Data over MaxFileSize may only replace a
// file at least as large (the limit was lowered), so it is written as an
// update on that condition, which the inner store checks and writes in one
// step: a delete, or a smaller write by another process, that lands after
// a look at the old size cannot make it a file over the limit. Holding a
// lock instead would not keep other processes out, and would make every
// remove and rename wait for it.
func (s *Store) write(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	size := int64(len(data))
	if n := s.opts.MaxFileSize; n <= 0 || size <= n {
		return s.inner.WriteFile(ctx, name, data, mode)
	}
	if mode == memtool.CreateOnly {
		return s.checkFileSize(name, 0, size)
	}
	err := s.inner.Update(ctx, name, 1<<40, func(old []byte) ([]byte, error) {
		if err := s.checkFileSize(name, int64(len(old)), size); err != nil {
			return nil, err
		}
		return data, nil
	})
	if errors.Is(err, memtool.ErrNotExist) {
		return s.checkFileSize(name, 0, size) // the write would make the file
	}
	return err
}

// cannotWrite is the error of a write that finds fi at name: any entry
// for a create, else something other than a regular file.
func cannotWrite(name string, fi memtool.FileInfo, mode memtool.WriteMode) error {
	err := memtool.ErrExist
	switch {
	case mode == memtool.CreateOnly:
	case fi.IsDir():
		err = memtool.ErrIsDir
	default:
		err = memtool.ErrIrregular
	}
	return &fs.PathError{Op: "write", Path: name, Err: err}
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var u usage
	if s.opts.MaxBytes > 0 { // an edit adds no entry: MaxFiles cannot be crossed
		s.mu.Lock()
		defer s.mu.Unlock()
		var err error
		if u, err = s.usage(ctx); err != nil {
			return err
		}
	}
	return s.inner.Update(ctx, name, limit, func(old []byte) ([]byte, error) {
		data, err := fn(old)
		if err != nil {
			return nil, err
		}
		oldSize, size := int64(len(old)), int64(len(data))
		if err := s.checkFileSize(name, oldSize, size); err != nil {
			return nil, err
		}
		if s.opts.MaxBytes > 0 && size > oldSize && u.bytes+size-oldSize > s.opts.MaxBytes {
			return nil, refuse(Bytes, memtool.VirtualPath(name), u.bytes+size-oldSize, s.opts.MaxBytes, "byte")
		}
		return data, nil
	})
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	done, err := s.makeEntry(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	if s.opts.MaxFiles <= 0 {
		return s.inner.Mkdir(ctx, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch _, err := s.inner.Stat(ctx, name); {
	case err == nil:
		return s.inner.Mkdir(ctx, name) // the inner store's ErrExist
	case !errors.Is(err, memtool.ErrNotExist):
		return err
	}
	// A parent that is missing or a file is what to fix, not the quota.
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		switch fi, err := s.inner.Stat(ctx, name[:i]); {
		case errors.Is(err, memtool.ErrNotExist), err == nil && !fi.IsDir():
			return s.inner.Mkdir(ctx, name) // the inner store's ErrNotExist or ErrNotDir
		case err != nil:
			return err
		}
	}
	if err := s.checkUsage(ctx, name, 1, 0); err != nil {
		return err
	}
	return s.inner.Mkdir(ctx, name)
}

// rename checks the paths the moved entries would get; a rename changes
// neither the number of entries nor the bytes. With MaxFiles or MaxBytes
// on, it waits for a counted write under way: landing between that
// write's count and its write, it would keep the old file's bytes under
// the new name while the write made a new file. With the path limits on,
// nothing is made (nor moved in) in the tree between its check and its
// move, which would move it unchecked.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.checkingPaths() {
		s.mu.moving.Lock()
		defer s.mu.moving.Unlock()
	}
	if s.counting() {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	if err := s.checkPath(newname, newname); err != nil {
		return err
	}
	if s.checkingPaths() {
		// The deepest and the longest name below oldname, moved to newname.
		err := memtool.Walk(ctx, s.inner, oldname, func(name string, _ memtool.FileInfo) error {
			moved := newname + strings.TrimPrefix(name, oldname)
			return s.checkPath(moved, moved)
		})
		if err != nil && !errors.Is(err, memtool.ErrNotExist) && !errors.Is(err, memtool.ErrNotDir) {
			return err
		}
	}
	return memtool.ForwardRename(ctx, s.inner, oldname, newname)
}

func (s *Store) checkPath(name, shown string) error {
	vp := memtool.VirtualPath(shown)
	if n := s.opts.MaxPathLength; n > 0 && len(vp) > n {
		return refuse(PathLength, vp, int64(len(vp)), int64(n), "byte")
	}
	if n := s.opts.MaxDepth; n > 0 {
		if d := strings.Count(name, "/") + 1; name != "" && d > n {
			return refuse(Depth, vp, int64(d), int64(n), "level")
		}
	}
	return nil
}

// checkFileSize refuses a file that would grow beyond the limit. A file
// that is over it already (the limit was lowered) may still shrink.
func (s *Store) checkFileSize(name string, oldSize, size int64) error {
	if n := s.opts.MaxFileSize; n > 0 && size > n && size > oldSize {
		return refuse(FileSize, memtool.VirtualPath(name), size, n, "byte")
	}
	return nil
}

// checkUsage refuses adding files entries and bytes bytes to the store if
// that crosses MaxFiles or MaxBytes.
func (s *Store) checkUsage(ctx context.Context, name string, files, bytes int64) error {
	u, err := s.usage(ctx)
	if err != nil {
		return err
	}
	return s.checkGrowth(u, name, files, bytes)
}

// checkGrowth refuses adding files entries and bytes bytes to a store
// that holds u, if that crosses MaxFiles or MaxBytes.
func (s *Store) checkGrowth(u usage, name string, files, bytes int64) error {
	vp := memtool.VirtualPath(name)
	if n := s.opts.MaxFiles; n > 0 && files > 0 && u.files+files > n {
		return refuse(Files, vp, u.files+files, n, "file or directory")
	}
	if n := s.opts.MaxBytes; n > 0 && bytes > 0 && u.bytes+bytes > n {
		return refuse(Bytes, vp, u.bytes+bytes, n, "byte")
	}
	return nil
}

type usage struct{ files, bytes int64 }

// usage counts the entries and bytes of the whole store. It walks the
// store every time, so that changes made by other processes sharing it
// count too.
func (s *Store) usage(ctx context.Context) (usage, error) {
	u, _, err := s.usageAt(ctx, "")
	return u, err
}

// usageAt is usage, and the entry at name as the walk found it (nil if
// it found none).
func (s *Store) usageAt(ctx context.Context, at string) (usage, *memtool.FileInfo, error) {
	var u usage
	var found *memtool.FileInfo
	err := memtool.Walk(ctx, s.inner, "", func(name string, fi memtool.FileInfo) error {
		if name != "" {
			u.files++
			u.bytes += fi.Size
			if name == at {
				found = &fi
			}
		}
		return nil
	})
	return u, found, err
}

// SearchFiles forwards to the index of the wrapped store
// (memtool.Searcher): this policy reads files as they are, and hides none.
func (s *Store) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(name string, data []byte) error) error {
	return memtool.ForwardSearchFiles(ctx, s.inner, dir, q, fn)
}
