package history_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// refusingWrites is a policy over a store that refuses every file write,
// as a quota or a secret filter over the history wrapper may.
type refusingWrites struct{ memtool.Store }

var errRefused = memtool.Refusal("refused by policy")

func (refusingWrites) WriteFile(context.Context, string, []byte, memtool.WriteMode) error {
	return errRefused
}

// TestRevertRefusedLeavesNothing: reverting a deleted file creates its
// parent directories again; if the write is then refused, Revert fails
// and the directories it created are gone again.
func TestRevertRefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	s := history.New(inner, nil)
	if _, err := memtool.MkdirAll(ctx, s, "d/e"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "d/e/a.md", []byte("text"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := memtool.RemoveAll(ctx, s, "d"); err != nil {
		t.Fatal(err)
	}
	vs, err := history.Versions(ctx, inner, "/memories/d/e/a.md")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions: %+v, %v", vs, err)
	}
	err = history.Revert(ctx, refusingWrites{s}, inner, "/memories/d/e/a.md", vs[0].N)
	if !errors.Is(err, errRefused) {
		t.Fatalf("revert: %v, want the refusal", err)
	}
	if _, err := s.Stat(ctx, "d"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("after a refused revert, d: %v; want it gone, as before", err)
	}
}

// TestRevertToCurrentKeepsNothing: a revert to a version that holds what
// the file holds now changes nothing, so it keeps no version either (as
// an edit that changes nothing). Before, it kept the current content
// again, and with MaxVersions reached that pushed the oldest version,
// a content kept nowhere else, out.
func TestRevertToCurrentKeepsNothing(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, &history.Options{MaxVersions: 3})
		if err := s.WriteFile(ctx, "a", []byte("A"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"C", "B", "C"} {
			if err := s.WriteFile(ctx, "a", []byte(text), memtool.Replace); err != nil {
				t.Fatal(err)
			}
		}
		// Versions 1 A, 2 C, 3 B; the file holds C.
		if err := history.Revert(ctx, s, inner, "/memories/a", 2); err != nil {
			t.Fatal(err)
		}
		if got := contents(t, inner, "/memories/a"); !slices.Equal(got, []string{"A", "C", "B"}) {
			t.Errorf("versions after reverting to the current content: %q, want A C B as before", got)
		}
		if data, err := s.ReadFile(ctx, "a", 1<<20); string(data) != "C" || err != nil {
			t.Errorf("the file: %q, %v", data, err)
		}
	})
}

// contents returns the contents of the kept versions of the virtual path
// p, oldest first.
func contents(t *testing.T, inner memtool.Store, p string) []string {
	t.Helper()
	ctx := context.Background()
	vs, err := history.Versions(ctx, inner, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		data, err := history.Read(ctx, inner, p, v.N)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

// TestEditPanicKeepsNothing: an edit whose function panics once the
// version is saved (a store calls it again inside its update) changes
// nothing, the panic goes on, and nothing is kept. Before, the saved
// version stayed: a version of a change that never happened.
func TestEditPanicKeepsNothing(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, nil)
		if err := s.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		calls := 0
		func() {
			defer func() {
				if p := recover(); p != "second call" {
					t.Errorf("recovered %v, want the edit's panic", p)
				}
			}()
			s.Update(ctx, "a", 1<<20, func([]byte) ([]byte, error) {
				if calls++; calls > 1 {
					panic("second call")
				}
				return []byte("new"), nil
			})
		}()
		if data, err := s.ReadFile(ctx, "a", 1<<20); string(data) != "old" || err != nil {
			t.Errorf("after the panic the file holds %q, %v", data, err)
		}
		if got := contents(t, inner, "/memories/a"); len(got) != 0 {
			t.Errorf("after an edit that panicked: versions %q", got)
		}
		// The wrapper is still usable.
		if err := s.WriteFile(ctx, "a", []byte("newer"), memtool.Replace); err != nil {
			t.Fatal(err)
		}
		if got := contents(t, inner, "/memories/a"); !slices.Equal(got, []string{"old"}) {
			t.Errorf("versions after a write: %q", got)
		}
	})
}

// TestRenameKeepsNothing: renaming a file or a directory keeps nothing,
// and the versions stay under the old path.
func TestRenameKeepsNothing(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		s := history.New(inner, nil)
		mem := memtool.New(s, nil)
		storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/d/f", "file_text": "one"})
		storetest.Call(t, mem, map[string]any{"command": "str_replace", "path": "/memories/d/f", "old_str": "one", "new_str": "two"})
		storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/d/f", "new_path": "/memories/d/g"})
		storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"})
		if r := storetest.Call(t, mem, map[string]any{"command": "view", "path": "/memories/e/g"}); r.IsError || !strings.Contains(r.Text, "two") {
			t.Fatalf("after the renames: %q", r.Text)
		}
		for p, want := range map[string][]string{"/memories/d/f": {"one"}, "/memories/d/g": nil, "/memories/e/g": nil} {
			if got := contents(t, inner, p); !slices.Equal(got, want) {
				t.Errorf("versions of %s: %q, want %q", p, got, want)
			}
		}
	})
}

// TestRenameWithoutRenamer: over a store without an atomic rename,
// memtool renames by copying and deleting, and the delete keeps the old
// path's content, as the package doc says.
func TestRenameWithoutRenamer(t *testing.T) {
	ctx := context.Background()
	inner := noRename{memstore.New()}
	mem := memtool.New(history.New(inner, nil), nil)
	storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/d/f", "file_text": "one"})
	if r := storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/d/f", "new_path": "/memories/d/g"}); r.IsError {
		t.Fatal(r.Text)
	}
	vs, err := history.Versions(ctx, inner, "/memories/d/f")
	if err != nil || len(vs) != 1 || vs[0].Op != "delete" {
		t.Fatalf("versions of the old path: %+v, %v", vs, err)
	}
	if got := contents(t, inner, "/memories/d/g"); len(got) != 0 {
		t.Errorf("versions of the new path: %q", got)
	}
}

// TestMaxAgeBoundary: a version exactly MaxAge old stays, one a
// nanosecond older goes; a clock that goes back drops nothing; a
// negative MaxAge keeps versions for ever.
func TestMaxAgeBoundary(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	for _, c := range []struct {
		maxAge time.Duration
		later  time.Duration // the clock when the next change is made
		want   []string
	}{
		{time.Hour, time.Hour, []string{"0", "1"}},
		{time.Hour, time.Hour + 1, []string{"1"}},
		{time.Hour, -48 * time.Hour, []string{"0", "1"}},
		{-1, 1000 * time.Hour, []string{"0", "1"}},
	} {
		inner := memstore.New()
		s := history.New(inner, &history.Options{MaxAge: c.maxAge, Now: clock})
		now = start
		s.WriteFile(ctx, "a", []byte("0"), memtool.CreateOnly)
		s.WriteFile(ctx, "a", []byte("1"), memtool.Replace) // keeps "0", made at start
		now = start.Add(c.later)
		s.WriteFile(ctx, "a", []byte("2"), memtool.Replace) // keeps "1", made now
		if got := contents(t, inner, "/memories/a"); !slices.Equal(got, c.want) {
			t.Errorf("MaxAge %v, %v later: versions %q, want %q", c.maxAge, c.later, got, c.want)
		}
	}
}
