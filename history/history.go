package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memtool/memtool"
)

// The wrapper's own entries in the inner store, which the path gate keeps
// from the model: one directory per file path, named by a hash of it,
// holding the path ("path") and the versions, each named
// "<number>-<unix nanoseconds>-<operation>".
const (
	ownPrefix = ".memtool-history"
	rootName  = ".memtool-history"
	pathFile  = "path"
)

// Options bound what is kept. nil means the defaults.
type Options struct {
	// MaxVersions is the most earlier versions kept per file. Default 20.
	MaxVersions int
	// MaxAge: versions older than this are dropped. Default 30 days; a
	// negative value keeps them for ever (within MaxVersions).
	MaxAge time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// OnError receives failures to prune old versions; the operation has
	// succeeded. Default: ignored.
	OnError func(error)
}

// Store wraps a memtool.Store and keeps the previous version of every file
// that is replaced, edited or removed. Use New.
type Store struct {
	inner memtool.Store
	opts  Options
	// mu serialises saving a version with the change it precedes, so
	// that versions are numbered in the order of the changes (within this
	// process).
	mu sync.Mutex
}

// New wraps inner. opts may be nil. The result implements memtool.Renamer
// and memtool.RemoveAller exactly when inner does.
func New(inner memtool.Store, opts *Options) memtool.Store {
	s := &Store{inner: inner}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.MaxVersions <= 0 {
		s.opts.MaxVersions = 20
	}
	if s.opts.MaxAge == 0 {
		s.opts.MaxAge = 30 * 24 * time.Hour
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	return memtool.WithCapabilitiesOf(inner, s, s.rename, s.removeAll)
}

var _ memtool.Store = (*Store)(nil)

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return s.inner.Stat(ctx, name)
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return s.inner.ReadFile(ctx, name, limit)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := s.inner.ReadDir(ctx, name)
	if name == "" {
		out := entries[:0]
		for _, e := range entries {
			if !strings.HasPrefix(e.Name, ownPrefix) {
				out = append(out, e)
			}
		}
		entries = out
	}
	return entries, err
}

func (s *Store) Mkdir(ctx context.Context, name string) error { return s.inner.Mkdir(ctx, name) }

// rename changes no content: nothing to keep.
func (s *Store) rename(ctx context.Context, oldname, newname string) error {
	return s.inner.(memtool.Renamer).Rename(ctx, oldname, newname)
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if mode == memtool.CreateOnly {
		return s.inner.WriteFile(ctx, name, data, mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.inner.ReadFile(ctx, name, 1<<40)
	switch {
	case errors.Is(err, memtool.ErrNotExist):
		return s.inner.WriteFile(ctx, name, data, mode)
	case err != nil:
		// The inner store's own error for the write (a directory is there…).
		return s.inner.WriteFile(ctx, name, data, mode)
	}
	return s.saveThen(ctx, name, old, "write", func() error { return s.inner.WriteFile(ctx, name, data, mode) })
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		old, err := s.inner.ReadFile(ctx, name, limit)
		if err != nil {
			// Missing, too large, cancelled…: the inner store's own error.
			return s.inner.Update(ctx, name, limit, fn)
		}
		// The version is saved before the update (fn must have no side
		// effects), and the update goes ahead only if the file is still
		// what was saved; another process may have changed it meanwhile.
		v, err := s.save(ctx, name, old, "update")
		if err != nil {
			return err
		}
		err = s.inner.Update(ctx, name, limit, func(cur []byte) ([]byte, error) {
			if !bytes.Equal(cur, old) {
				return nil, errChanged
			}
			return fn(cur)
		})
		if err == nil {
			s.prune(ctx, name)
			return nil
		}
		s.drop(ctx, v)
		if err != errChanged {
			return err
		}
	}
}

var errChanged = errors.New("changed since it was saved")

func (s *Store) Remove(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.inner.ReadFile(ctx, name, 1<<40)
	if err != nil {
		return s.inner.Remove(ctx, name) // a directory, or the inner store's error
	}
	return s.saveThen(ctx, name, old, "delete", func() error { return s.inner.Remove(ctx, name) })
}

// removeAll keeps every file under name, then removes it.
func (s *Store) removeAll(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var saved []string
	err := walkFiles(ctx, s.inner, name, func(file string) error {
		old, err := s.inner.ReadFile(ctx, file, 1<<40)
		if err != nil {
			return err
		}
		v, err := s.save(ctx, file, old, "delete")
		saved = append(saved, v)
		return err
	})
	if err == nil {
		err = s.inner.(memtool.RemoveAller).RemoveAll(ctx, name)
	}
	if err != nil {
		for _, v := range saved {
			s.drop(ctx, v)
		}
	}
	return err
}

// saveThen keeps old as a version of name, then runs change; if change
// fails, the version is removed again, so that a failed operation leaves
// nothing behind.
func (s *Store) saveThen(ctx context.Context, name string, old []byte, op string, change func() error) error {
	v, err := s.save(ctx, name, old, op)
	if err != nil {
		return err
	}
	if err := change(); err != nil {
		s.drop(ctx, v)
		return err
	}
	s.prune(ctx, name)
	return nil
}

// fileDir is the directory of name's versions.
func fileDir(name string) string {
	sum := sha256.Sum256([]byte(name))
	return path.Join(rootName, hex.EncodeToString(sum[:16]))
}

// save writes old as the next version of name and returns its entry name.
func (s *Store) save(ctx context.Context, name string, old []byte, op string) (string, error) {
	dir := fileDir(name)
	for _, d := range []string{rootName, dir} {
		if err := s.inner.Mkdir(ctx, d); err != nil && !errors.Is(err, memtool.ErrExist) {
			return "", err
		}
	}
	err := s.inner.WriteFile(ctx, path.Join(dir, pathFile), []byte(name), memtool.CreateOnly)
	if err != nil && !errors.Is(err, memtool.ErrExist) {
		return "", err
	}
	versions, err := listVersions(ctx, s.inner, dir)
	if err != nil {
		return "", err
	}
	n := 1
	if len(versions) > 0 {
		n = versions[len(versions)-1].N + 1
	}
	for ; ; n++ {
		entry := path.Join(dir, fmt.Sprintf("%06d-%d-%s", n, s.opts.Now().UnixNano(), op))
		err := s.inner.WriteFile(ctx, entry, old, memtool.CreateOnly)
		if !errors.Is(err, memtool.ErrExist) {
			return entry, err
		}
	}
}

func (s *Store) drop(ctx context.Context, entry string) {
	s.inner.Remove(context.WithoutCancel(ctx), entry)
}

// prune drops versions of name beyond MaxVersions or older than MaxAge.
func (s *Store) prune(ctx context.Context, name string) {
	ctx = context.WithoutCancel(ctx)
	dir := fileDir(name)
	versions, err := listVersions(ctx, s.inner, dir)
	if err != nil {
		if s.opts.OnError != nil {
			s.opts.OnError(err)
		}
		return
	}
	now := s.opts.Now()
	for i, v := range versions {
		tooMany := len(versions)-i > s.opts.MaxVersions
		tooOld := s.opts.MaxAge > 0 && now.Sub(v.Time) > s.opts.MaxAge
		if tooMany || tooOld {
			if err := s.inner.Remove(ctx, path.Join(dir, v.entry)); err != nil && s.opts.OnError != nil {
				s.opts.OnError(err)
			}
		}
	}
}

// A Version is an earlier content of a file.
type Version struct {
	N    int       // 1 for the oldest kept; numbers are never reused
	Time time.Time // when it was replaced
	Op   string    // what replaced it: "update" (an edit, or a create that overwrote it), "write" (a whole-file write, such as a revert), "delete"
	Size int64

	entry string
}

func listVersions(ctx context.Context, inner memtool.Store, dir string) ([]Version, error) {
	entries, err := inner.ReadDir(ctx, dir)
	if errors.Is(err, memtool.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Version
	for _, e := range entries {
		parts := strings.SplitN(e.Name, "-", 3)
		if len(parts) != 3 || !e.IsRegular() {
			continue
		}
		n, err1 := strconv.Atoi(parts[0])
		ns, err2 := strconv.ParseInt(parts[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Version{N: n, Time: time.Unix(0, ns).UTC(), Op: parts[2], Size: e.Size, entry: e.Name})
	}
	slices.SortFunc(out, func(a, b Version) int { return a.N - b.N })
	return out, nil
}

// Versions lists the kept versions of the file at the virtual path p in
// inner (the store the wrapper wraps), oldest first.
func Versions(ctx context.Context, inner memtool.Store, p string) ([]Version, error) {
	name, err := fileName(p)
	if err != nil {
		return nil, err
	}
	return listVersions(ctx, inner, fileDir(name))
}

// ErrNoVersion: no kept version has that number.
var ErrNoVersion = errors.New("no such version")

// Read returns version n of the file at the virtual path p.
func Read(ctx context.Context, inner memtool.Store, p string, n int) ([]byte, error) {
	name, err := fileName(p)
	if err != nil {
		return nil, err
	}
	versions, err := listVersions(ctx, inner, fileDir(name))
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if v.N == n {
			return inner.ReadFile(ctx, path.Join(fileDir(name), v.entry), 1<<40)
		}
	}
	return nil, fmt.Errorf("%s version %d: %w", p, n, ErrNoVersion)
}

// Revert makes version n the content of the file at the virtual path p,
// through store (the wrapper, so that the content it replaces is kept as a
// version too). A deleted file is created again, with its parent
// directories.
func Revert(ctx context.Context, store, inner memtool.Store, p string, n int) error {
	data, err := Read(ctx, inner, p, n)
	if err != nil {
		return err
	}
	name, _ := fileName(p)
	if dir := path.Dir(name); dir != "." {
		parts := strings.Split(dir, "/")
		for i := range parts {
			if err := store.Mkdir(ctx, strings.Join(parts[:i+1], "/")); err != nil && !errors.Is(err, memtool.ErrExist) {
				return err
			}
		}
	}
	return store.WriteFile(ctx, name, data, memtool.Replace)
}

func fileName(p string) (string, error) {
	name, dir, err := memtool.CleanPath(p)
	if err != nil {
		return "", err
	}
	if name == "" || dir {
		return "", fmt.Errorf("%s is not a file path", p)
	}
	return name, nil
}

func walkFiles(ctx context.Context, s memtool.Store, name string, fn func(string) error) error {
	fi, err := s.Stat(ctx, name)
	if err != nil {
		return err
	}
	if fi.IsRegular() {
		return fn(name)
	}
	if !fi.IsDir() {
		return nil
	}
	entries, err := s.ReadDir(ctx, name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := walkFiles(ctx, s, path.Join(name, e.Name), fn); err != nil && !errors.Is(err, memtool.ErrNotExist) {
			return err
		}
	}
	return nil
}
