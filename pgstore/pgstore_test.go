package pgstore_test

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

func open(t *testing.T, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		return open(t, pgtest.URL(t))
	})
}

func TestConformanceTenant(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		ctx := context.Background()
		s := open(t, pgtest.URL(t))
		// A neighbour with entries of the same names must stay invisible.
		other, err := s.Tenant(ctx, "neighbour")
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Mkdir(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := other.WriteFile(ctx, "a/b", []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tenant(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		return ts
	})
}

// TestConcurrentOpen opens one new database from many goroutines at once:
// the migrations run once, and every open succeeds.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.Open(context.Background(), url, nil)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestTenancyIsExclusive(t *testing.T) {
	ctx := context.Background()
	single := open(t, pgtest.URL(t))
	if _, err := single.Stat(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := single.Tenant(ctx, "t1"); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenant on a single-tenant database: %v, want ErrTenancy", err)
	}

	url := pgtest.URL(t)
	if _, err := open(t, url).Tenant(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, url).ReadDir(ctx, ""); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("tenant-less ReadDir on a multi-tenant database: %v, want ErrTenancy", err)
	}
}

// TestSubtreeBounds moves and removes a directory beside names that share
// its prefix and sort next to it ("a.b", "a-c", "a0", "ab"), which a
// subtree range on the parent column must leave alone.
func TestSubtreeBounds(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.URL(t))
	for _, d := range []string{"a", "a/y", "a.b", "a-c", "a0", "ab", "q"} {
		if err := s.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/x", "a/y/z", "a.b/w", "a-c/w", "a0/w", "ab/w"} {
		if err := s.WriteFile(ctx, f, []byte(f), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Rename(ctx, "a", "q/a"); err != nil {
		t.Fatal(err)
	}
	want := "a-c/ a-c/w a.b/ a.b/w a0/ a0/w ab/ ab/w q/ q/a/ q/a/x q/a/y/ q/a/y/z"
	if got := walk(t, s); got != want {
		t.Errorf("after the rename:\n got %s\nwant %s", got, want)
	}
	if err := s.RemoveAll(ctx, "q/a"); err != nil {
		t.Fatal(err)
	}
	want = "a-c/ a-c/w a.b/ a.b/w a0/ a0/w ab/ ab/w q/"
	if got := walk(t, s); got != want {
		t.Errorf("after RemoveAll:\n got %s\nwant %s", got, want)
	}
}

// walk lists every entry of s, sorted, directories with a slash; a file
// must hold its own name.
func walk(t *testing.T, s memtool.Store) string {
	t.Helper()
	var names []string
	var visit func(dir string)
	visit = func(dir string) {
		entries, err := s.ReadDir(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			if e.IsDir() {
				names = append(names, name+"/")
				visit(name)
				continue
			}
			names = append(names, name)
			data, err := s.ReadFile(context.Background(), name, 100)
			if err != nil {
				t.Fatal(err)
			}
			if d, _, _ := strings.Cut(name, "/"); d != "q" && string(data) != name {
				t.Errorf("%s holds %q", name, data)
			}
		}
	}
	visit("")
	slices.Sort(names)
	return strings.Join(names, " ")
}
