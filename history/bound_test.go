package history_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
)

// MaxBytes drops the oldest versions of any file, by the time they were
// kept, down to nine tenths of the bound, and never the version just
// kept, even one larger than the bound by itself; MaxVersions still
// holds per file; the live files are untouched.
func TestMaxBytesDropsOldestFirst(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, &history.Options{MaxBytes: 1000})
		write := func(name, text string, mode memtool.WriteMode) {
			t.Helper()
			if err := s.WriteFile(ctx, name, []byte(text), mode); err != nil {
				t.Fatal(err)
			}
		}
		// a: versions 1, 2 (200 bytes each); b: version 1 (300); c: 1, 2 (100).
		write("a.md", strings.Repeat("1", 200), memtool.CreateOnly)
		write("a.md", strings.Repeat("2", 200), memtool.Replace)
		write("a.md", strings.Repeat("3", 200), memtool.Replace)
		write("b.md", strings.Repeat("b", 300), memtool.CreateOnly)
		write("b.md", "B", memtool.Replace)
		write("c.md", strings.Repeat("x", 100), memtool.CreateOnly)
		write("c.md", strings.Repeat("y", 100), memtool.Replace)
		write("c.md", strings.Repeat("z", 100), memtool.Replace) // 900 bytes of versions
		sizes := func(p string) []string {
			t.Helper()
			vs, err := history.Versions(ctx, inner, p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, v := range vs {
				out = append(out, fmt.Sprintf("%d:%d", v.N, v.Size))
			}
			return out
		}
		check := func(when string, want map[string]string) {
			t.Helper()
			for p, w := range want {
				if got := strings.Join(sizes(p), " "); got != w {
					t.Errorf("%s: versions of %s: %q; want %q", when, p, got, w)
				}
			}
		}
		check("under the bound", map[string]string{"/memories/a.md": "1:200 2:200", "/memories/b.md": "1:300", "/memories/c.md": "1:100 2:100"})
		// 1,200 bytes: down to 900 at most, the oldest first (a's 1 and 2).
		write("b.md", strings.Repeat("N", 300), memtool.Replace) // keeps "B" (1 byte)
		write("d.md", strings.Repeat("d", 299), memtool.CreateOnly)
		if err := s.Remove(ctx, "d.md"); err != nil { // keeps 299 bytes
			t.Fatal(err)
		}
		check("past the bound", map[string]string{"/memories/a.md": "", "/memories/b.md": "1:300 2:1", "/memories/c.md": "1:100 2:100", "/memories/d.md": "1:299"})
		// A version larger than the bound stays, alone.
		write("big.md", strings.Repeat("g", 1500), memtool.CreateOnly)
		write("big.md", "small", memtool.Replace)
		check("a version larger than the bound", map[string]string{"/memories/b.md": "", "/memories/c.md": "", "/memories/d.md": "", "/memories/big.md": "1:1500"})
		for name, want := range map[string]string{"a.md": strings.Repeat("3", 200), "b.md": strings.Repeat("N", 300), "c.md": strings.Repeat("z", 100), "big.md": "small"} {
			if got, err := s.ReadFile(ctx, name, 1<<20); err != nil || string(got) != want {
				t.Errorf("live %s: %.10q…, %v", name, got, err)
			}
		}
		if _, err := history.Read(ctx, inner, "/memories/a.md", 1); !errors.Is(err, history.ErrNoVersion) {
			t.Errorf("read of a pruned version: %v; want ErrNoVersion", err)
		}
	})
}

// The usage counter is made on the first version kept, also over a store
// with versions from before it (counted, so that the bound holds at once),
// and a damaged counter is counted again rather than stopping changes.
func TestMaxBytesCountsWhatIsThere(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		old := history.New(inner, &history.Options{MaxBytes: -1}) // keeps no count
		for i := range 5 {
			if err := old.WriteFile(ctx, fmt.Sprintf("f%d.md", i), []byte(strings.Repeat("o", 300)), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			if err := old.Remove(ctx, fmt.Sprintf("f%d.md", i)); err != nil {
				t.Fatal(err)
			}
		}
		s := history.New(inner, &history.Options{MaxBytes: 1000})
		if err := s.WriteFile(ctx, "n.md", []byte("n"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteFile(ctx, "n.md", []byte("m"), memtool.Replace); err != nil {
			t.Fatal(err)
		}
		if total := versionTotal(t, inner); total > 1000 {
			t.Errorf("after the first version kept, the versions hold %d bytes, over MaxBytes 1000", total)
		}
		// A damaged counter.
		if err := inner.WriteFile(ctx, history.DirName+"/usage/counter", []byte("garbage"), memtool.Replace); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := s.WriteFile(ctx, "n.md", []byte(strings.Repeat(fmt.Sprint(i), 300)), memtool.Replace); err != nil {
				t.Fatalf("a change with the counter damaged: %v", err)
			}
		}
		if total := versionTotal(t, inner); total > 1000 {
			t.Errorf("with the counter damaged, the versions hold %d bytes, over MaxBytes 1000", total)
		}
	})
}

func versionTotal(t *testing.T, inner memtool.Store) int64 {
	t.Helper()
	var total int64
	err := memtool.Walk(context.Background(), inner, history.DirName, func(name string, fi memtool.FileInfo) error {
		if fi.IsRegular() && !strings.Contains(name, "/trash/") && path.Base(name) != "counter" && path.Base(name) != "path" {
			total += fi.Size
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
