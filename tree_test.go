package memtool_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// hooked is a store without optional capabilities whose hooks act as
// another process would, between the steps of a tree helper.
type hooked struct {
	memtool.Store
	afterReadDir func(name string) (acted bool)
	beforeMkdir  func(name string) error
	failRead     string // ReadFile of it fails with ErrTooLarge
}

func (h *hooked) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	es, err := h.Store.ReadDir(ctx, name)
	if f := h.afterReadDir; f != nil && f(name) {
		h.afterReadDir = nil // it acted: once is enough
	}
	return es, err
}

func (h *hooked) Mkdir(ctx context.Context, name string) error {
	if h.beforeMkdir != nil {
		if err := h.beforeMkdir(name); err != nil {
			return err
		}
	}
	return h.Store.Mkdir(ctx, name)
}

func (h *hooked) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if name == h.failRead {
		return nil, memtool.ErrTooLarge
	}
	return h.Store.ReadFile(ctx, name, limit)
}

// newTree returns a plain store holding the directories and files given
// (a name ending in "/" is a directory), and the store under it.
func newTree(t *testing.T, names ...string) (*hooked, *memstore.Store) {
	t.Helper()
	ctx := context.Background()
	inner := memstore.New()
	for _, n := range names {
		var err error
		if d, ok := cutSlash(n); ok {
			err = inner.Mkdir(ctx, d)
		} else {
			err = inner.WriteFile(ctx, n, []byte("text of "+n), memtool.CreateOnly)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &hooked{Store: inner}, inner
}

// after returns a hook that runs act once ReadDir has listed dir.
func after(dir string, act func()) func(string) bool {
	return func(name string) bool {
		if name != dir {
			return false
		}
		act()
		return true
	}
}

func cutSlash(n string) (string, bool) {
	if len(n) > 0 && n[len(n)-1] == '/' {
		return n[:len(n)-1], true
	}
	return n, false
}

func wantNames(t *testing.T, s memtool.Store, want ...string) {
	t.Helper()
	if got := storetest.Names(t, s); !slices.Equal(got, want) {
		t.Errorf("store holds %q, want %q", got, want)
	}
}

func TestWalk(t *testing.T) {
	ctx := context.Background()
	s, inner := newTree(t, "d/", "d/a", "d/sub/", "d/sub/b", "d/sub/deep/", "d/sub/deep/c", "e")
	var seen []string
	err := memtool.Walk(ctx, s, "d", func(name string, fi memtool.FileInfo) error {
		if i := slices.IndexFunc(seen, func(p string) bool { return p == parentOf(name) }); name != "d" && i < 0 {
			t.Errorf("%s visited before its parent", name)
		}
		seen = append(seen, name)
		return nil
	})
	slices.Sort(seen)
	if want := []string{"d", "d/a", "d/sub", "d/sub/b", "d/sub/deep", "d/sub/deep/c"}; err != nil || !slices.Equal(seen, want) {
		t.Errorf("Walk = %q, %v; want %q", seen, err, want)
	}
	if err := memtool.Walk(ctx, s, "nope", func(string, memtool.FileInfo) error { return nil }); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Walk of a missing name = %v, want ErrNotExist", err)
	}
	stop := errors.New("stop")
	if err := memtool.Walk(ctx, s, "d", func(string, memtool.FileInfo) error { return stop }); err != stop {
		t.Errorf("Walk = %v, want fn's error", err)
	}
	// fs.SkipDir for a directory: not walked into, the rest is.
	seen = nil
	err = memtool.Walk(ctx, s, "d", func(name string, _ memtool.FileInfo) error {
		seen = append(seen, name)
		if name == "d/sub" {
			return fs.SkipDir
		}
		return nil
	})
	slices.Sort(seen)
	if want := []string{"d", "d/a", "d/sub"}; err != nil || !slices.Equal(seen, want) {
		t.Errorf("Walk skipping d/sub = %q, %v; want %q", seen, err, want)
	}

	// Another process removes d/sub/deep after d/sub was listed: it is
	// walked as empty, and the rest is walked.
	s.afterReadDir = after("d/sub", func() {
		must.Succeed(t, memtool.RemoveAll(ctx, inner, "d/sub/deep"))
	})
	seen = nil
	err = memtool.Walk(ctx, s, "d", func(name string, _ memtool.FileInfo) error {
		seen = append(seen, name)
		return nil
	})
	if err != nil || !slices.Contains(seen, "d/sub/deep") || slices.Contains(seen, "d/sub/deep/c") || !slices.Contains(seen, "d/a") {
		t.Errorf("Walk with d/sub/deep vanishing = %q, %v", seen, err)
	}
}

func parentOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return ""
}

func TestMkdirAll(t *testing.T) {
	ctx := context.Background()
	s, _ := newTree(t, "a/", "a/f")
	created, err := memtool.MkdirAll(ctx, s, "a/b/c")
	if want := []string{"a/b", "a/b/c"}; err != nil || !slices.Equal(created, want) {
		t.Errorf("MkdirAll = %q, %v; want %q", created, err, want)
	}
	// An existing directory: no Mkdir at all, however deep (one Stat).
	s.beforeMkdir = func(name string) error {
		t.Errorf("MkdirAll of an existing tree called Mkdir(%s)", name)
		return nil
	}
	if created, err := memtool.MkdirAll(ctx, s, "a/b/c"); err != nil || created != nil {
		t.Errorf("MkdirAll of an existing tree = %q, %v; want nothing created", created, err)
	}
	s.beforeMkdir = nil
	if created, err := memtool.MkdirAll(ctx, s, "."); err != nil || created != nil {
		t.Errorf("MkdirAll of the root = %q, %v", created, err)
	}

	// A file in the way: ErrNotDir, naming it.
	var pe *fs.PathError
	created, err = memtool.MkdirAll(ctx, s, "a/f/g/h")
	if !errors.Is(err, memtool.ErrNotDir) || !errors.As(err, &pe) || pe.Path != "a/f" || created != nil {
		t.Errorf("MkdirAll through a file = %q, %v; want ErrNotDir at a/f", created, err)
	}

	// A failure removes what MkdirAll created, and nothing else.
	errIO := errors.New("input/output error")
	s.beforeMkdir = func(name string) error {
		if name == "x/y/z" {
			return errIO
		}
		return nil
	}
	created, err = memtool.MkdirAll(ctx, s, "x/y/z/w")
	if !errors.Is(err, errIO) || created != nil {
		t.Errorf("MkdirAll = %q, %v; want the store's error", created, err)
	}
	wantNames(t, s, "a/", "a/b/", "a/b/c/", "a/f")
}

func TestRemoveAll(t *testing.T) {
	ctx := context.Background()
	tree := []string{"d/", "d/a", "d/sub/", "d/sub/b", "d/sub/deep/", "d/sub/deep/c", "e"}
	s, inner := newTree(t, tree...)
	must.Succeed(t, memtool.RemoveAll(ctx, s, "d"))
	wantNames(t, s, "e")
	must.Succeed(t, memtool.RemoveAll(ctx, s, "e"))
	if err := memtool.RemoveAll(ctx, s, "d"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("RemoveAll of a missing name = %v, want ErrNotExist", err)
	}

	// Entries another process removes meanwhile are skipped.
	s, inner = newTree(t, tree...)
	s.afterReadDir = after("d/sub", func() {
		must.Succeed(t, memtool.RemoveAll(ctx, inner, "d/sub/deep"))
		must.Succeed(t, inner.Remove(ctx, "d/sub/b"))
	})
	must.Succeed(t, memtool.RemoveAll(ctx, s, "d"))
	wantNames(t, s, "e")

	// An entry another process creates meanwhile stays, with its parents.
	// (No d/a here: memstore lists in map order, and whether RemoveAll
	// reaches d/a before it fails at d/sub depends on that order.)
	s, inner = newTree(t, "d/", "d/sub/", "d/sub/b", "d/sub/deep/", "d/sub/deep/c", "e")
	s.afterReadDir = after("d/sub", func() {
		must.Succeed(t, inner.WriteFile(ctx, "d/sub/new", nil, memtool.CreateOnly))
	})
	if err := memtool.RemoveAll(ctx, s, "d"); !errors.Is(err, memtool.ErrNotEmpty) {
		t.Errorf("RemoveAll with an entry created meanwhile = %v, want ErrNotEmpty", err)
	}
	wantNames(t, s, "d/", "d/sub/", "d/sub/new", "e")

	// With RemoveAller, RemoveAll is the store's.
	ra := &removeAllCounter{Store: memstore.New()}
	must.Succeed(t, ra.Mkdir(ctx, "d"))
	must.Succeed(t, memtool.RemoveAll(ctx, ra, "d"))
	if ra.calls != 1 {
		t.Errorf("RemoveAller called %d times, want 1", ra.calls)
	}
}

type removeAllCounter struct {
	memtool.Store
	calls int
}

func (s *removeAllCounter) RemoveAll(ctx context.Context, name string) error {
	s.calls++
	return s.Store.(memtool.RemoveAller).RemoveAll(ctx, name)
}

func TestCopy(t *testing.T) {
	ctx := context.Background()
	s, _ := newTree(t, "d/", "d/a", "d/sub/", "d/sub/b", "x/")
	must.Succeed(t, memtool.Copy(ctx, s, "d", "x/d", 1<<20))
	wantNames(t, s, "d/", "d/a", "d/sub/", "d/sub/b", "x/", "x/d/", "x/d/a", "x/d/sub/", "x/d/sub/b")
	if data, err := s.ReadFile(ctx, "x/d/sub/b", 1<<20); err != nil || string(data) != "text of d/sub/b" {
		t.Errorf("copy of d/sub/b = %q, %v", data, err)
	}
	if err := memtool.Copy(ctx, s, "d", "x/d", 1<<20); !errors.Is(err, memtool.ErrExist) {
		t.Errorf("Copy onto an existing tree = %v, want ErrExist", err)
	}
	wantNames(t, s, "d/", "d/a", "d/sub/", "d/sub/b", "x/", "x/d/", "x/d/a", "x/d/sub/", "x/d/sub/b")
	if err := memtool.Copy(ctx, s, "nope", "x/nope", 1<<20); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Copy of a missing name = %v, want ErrNotExist", err)
	}
	if err := memtool.Copy(ctx, s, "d", "d/sub/d", 1<<20); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Copy into itself = %v, want ErrInvalid", err)
	}

	// A failure part way removes the copies made, and only those.
	s, _ = newTree(t, "d/", "d/a", "d/sub/", "d/sub/b", "y/", "y/keep")
	s.failRead = "d/sub/b" // as if it had grown too large
	if err := memtool.Copy(ctx, s, "d", "y/d", 1<<20); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("Copy = %v, want the read's error", err)
	}
	wantNames(t, s, "d/", "d/a", "d/sub/", "d/sub/b", "y/", "y/keep")
}

func TestMove(t *testing.T) {
	ctx := context.Background()
	s, inner := newTree(t, "d/", "d/a", "d/sub/", "d/sub/b")
	must.Succeed(t, memtool.Move(ctx, s, "d", "m", 1<<20))
	wantNames(t, s, "m/", "m/a", "m/sub/", "m/sub/b")
	if err := memtool.Move(ctx, s, "nope", "x", 1<<20); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Move of a missing name = %v, want ErrNotExist", err)
	}
	if err := memtool.Move(ctx, s, "m", "m/sub/m", 1<<20); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Move into itself = %v, want ErrInvalid", err)
	}

	// An entry another process puts into the source meanwhile stays, with
	// the directories that hold it; what was copied is removed.
	s.afterReadDir = after("m/sub", func() {
		must.Succeed(t, inner.WriteFile(ctx, "m/sub/late", nil, memtool.CreateOnly))
	})
	must.Succeed(t, memtool.Move(ctx, s, "m", "n", 1<<20))
	wantNames(t, s, "m/", "m/sub/", "m/sub/late", "n/", "n/a", "n/sub/", "n/sub/b")

	// A failed copy removes the copies, and leaves the source.
	s.failRead = "n/sub/b" // as if it had grown too large
	if err := memtool.Move(ctx, s, "n", "o", 1<<20); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("Move = %v, want the read's error", err)
	}
	wantNames(t, s, "m/", "m/sub/", "m/sub/late", "n/", "n/a", "n/sub/", "n/sub/b")

	// With Renamer, Move is the store's rename: it reads no file, so the
	// limit of 0 that would stop the fallback does not matter.
	rs := memstore.New()
	must.Succeed(t, rs.Mkdir(ctx, "d"))
	must.Succeed(t, rs.WriteFile(ctx, "d/f", []byte("text"), memtool.CreateOnly))
	must.Succeed(t, memtool.Move(ctx, rs, "d", "e", 0))
	wantNames(t, rs, "e/", "e/f")
}
