package history_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

func TestWrapper(t *testing.T) {
	backendtest.RunWrapper(t, func(t *testing.T, inner memtool.Store) memtool.Store { return history.New(inner, nil) }, nil)
}

// TestVersions: every edit, overwrite and delete keeps the previous
// content; a failed edit keeps nothing; revert brings a version back and
// keeps the content it replaces.
func TestVersions(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, nil)
		mem := memtool.New(s, &memtool.Options{Overwrite: true})
		p := "/memories/d/notes.md"
		storetest.Call(t, mem, map[string]any{"command": "create", "path": p, "file_text": "one\ntwo\nthree"})
		storetest.Call(t, mem, map[string]any{"command": "str_replace", "path": p, "old_str": "two", "new_str": "TWO"})
		if r := storetest.Call(t, mem, map[string]any{"command": "str_replace", "path": p, "old_str": "absent", "new_str": "x"}); !r.IsError {
			t.Fatal("a failing edit succeeded")
		}
		storetest.Call(t, mem, map[string]any{"command": "insert", "path": p, "insert_line": 3, "insert_text": "four"})
		storetest.Call(t, mem, map[string]any{"command": "create", "path": p, "file_text": "replaced"})
		storetest.Call(t, mem, map[string]any{"command": "delete", "path": "/memories/d"})

		vs, err := history.Versions(ctx, inner, p)
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		var texts []string
		for _, v := range vs {
			ops = append(ops, v.Op)
			data, err := history.Read(ctx, inner, p, v.N)
			if err != nil || int64(len(data)) != v.Size {
				t.Errorf("version %d: %q, %v (size %d)", v.N, data, err, v.Size)
			}
			texts = append(texts, string(data))
		}
		wantOps := []string{"update", "update", "update", "delete"}
		wantTexts := []string{"one\ntwo\nthree", "one\nTWO\nthree", "one\nTWO\nthree\nfour", "replaced"}
		if !reflect.DeepEqual(ops, wantOps) || !reflect.DeepEqual(texts, wantTexts) {
			t.Errorf("versions:\n ops %v, want %v\n texts %q\n want  %q", ops, wantOps, texts, wantTexts)
		}
		// The model sees none of it.
		if r := storetest.Call(t, mem, map[string]any{"command": "view", "path": "/memories"}); strings.Contains(r.Text, "history") {
			t.Errorf("listing shows the history: %q", r.Text)
		}

		// Revert the deleted file to version 2.
		if err := history.Revert(ctx, s, inner, p, 2); err != nil {
			t.Fatal(err)
		}
		if r := storetest.Call(t, mem, map[string]any{"command": "view", "path": p}); !strings.Contains(r.Text, "TWO") || strings.Contains(r.Text, "four") {
			t.Errorf("after revert: %q", r.Text)
		}
		if err := history.Revert(ctx, s, inner, p, 3); err != nil {
			t.Fatal(err)
		}
		vs, _ = history.Versions(ctx, inner, p)
		if last := vs[len(vs)-1]; last.Op != "write" {
			t.Errorf("a revert over a file keeps it as a version: last %+v", last)
		}
		if err := history.Revert(ctx, s, inner, p, 99); !errors.Is(err, history.ErrNoVersion) {
			t.Errorf("revert to a missing version: %v", err)
		}
		// A file where a parent directory was: ErrNotDir, and the file stays.
		storetest.Call(t, mem, map[string]any{"command": "delete", "path": "/memories/d"})
		storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/d", "file_text": "a file"})
		if err := history.Revert(ctx, s, inner, p, 2); !errors.Is(err, memtool.ErrNotDir) {
			t.Errorf("revert below a file: %v, want ErrNotDir", err)
		}
		if r := storetest.Call(t, mem, map[string]any{"command": "view", "path": "/memories/d"}); !strings.Contains(r.Text, "a file") {
			t.Errorf("after a failed revert: %q", r.Text)
		}
	})
}

func TestBounds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	inner := memstore.New()
	s := history.New(inner, &history.Options{MaxVersions: 3, MaxAge: 48 * time.Hour, Now: clock})
	s.WriteFile(ctx, "a", []byte("0"), memtool.CreateOnly)
	for i := 1; i <= 5; i++ {
		s.WriteFile(ctx, "a", []byte{byte('0' + i)}, memtool.Replace)
	}
	vs, _ := history.Versions(ctx, inner, "/memories/a")
	if len(vs) != 3 || vs[0].N != 3 || vs[2].N != 5 {
		t.Errorf("MaxVersions 3: %+v", vs)
	}
	now = now.Add(72 * time.Hour)
	s.WriteFile(ctx, "a", []byte("6"), memtool.Replace)
	vs, _ = history.Versions(ctx, inner, "/memories/a")
	if len(vs) != 1 || vs[0].N != 6 {
		t.Errorf("MaxAge 48h, 72h later: %+v", vs)
	}
}

func TestDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13"
	want := "--- a\n+++ b\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -9,4 +9,5 @@\n 9\n 10\n 11\n-12\n\\ No newline at end of file\n+12\n+13\n\\ No newline at end of file\n"
	if got := history.Diff(a, b, "a", "b"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := history.Diff(a, a, "a", "b"); got != "" {
		t.Errorf("equal files: %q", got)
	}
	if got := history.Diff("", "x", "a", "b"); got != "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n\\ No newline at end of file\n" {
		t.Errorf("from empty: %q", got)
	}
}

// TestBattery: the same answers with and without the wrapper.
func TestBattery(t *testing.T) {
	battery.SameAnswers(t, battery.Inputs(t), history.New(memstore.New(), nil))
}

// BenchmarkEdit: a str_replace in a 4 KiB file through Memory on memstore,
// without and with the wrapper (which reads and keeps the old version).
func BenchmarkEdit(b *testing.B) {
	storetest.BenchmarkEdit(b, func() memtool.Store { return memstore.New() }, []byte(strings.Repeat("abcdefghijklmno\n", 256)), "history",
		func(_ *testing.B, s memtool.Store) memtool.Store { return history.New(s, nil) })
}

// BenchmarkEditFile is BenchmarkEdit on a directory store, where each
// change is made durable (fsync) and the version's too.
func BenchmarkEditFile(b *testing.B) {
	storetest.BenchmarkEdit(b, func() memtool.Store {
		s, err := filestore.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}, []byte(strings.Repeat("abcdefghijklmno\n", 256)), "history",
		func(_ *testing.B, s memtool.Store) memtool.Store { return history.New(s, nil) })
}
