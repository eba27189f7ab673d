package memtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// The tests of Memory's rename fallback, which runs on stores without
// memtool.Renamer (storetest.Bare): copy, then remove.

// do runs one command, built from alternating keys and values.
func do(mem *memtool.Memory, kv ...string) memtool.Result {
	in := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(in)
	return mem.Run(context.Background(), b)
}

// readText returns the text of a stored file, or "" and the error.
func readText(s memtool.Store, name string) (string, error) {
	b, err := s.ReadFile(context.Background(), name, 1<<20)
	return string(b), err
}

// TestFallbackRenameRacesInProcess runs the two turns that lost
// acknowledged writes when the fallbacks were ordered only against each
// other: [rename old→new, create new/notes.md] and [rename a→b,
// str_replace a], each pair at the same moment through one Memory, as the
// SDK runners run a turn's calls. Whatever order the pair takes, an
// acknowledged write must be in the store afterwards. A third pair,
// [delete tree, create tree/new.md], checks the delete fallback the same
// way.
func TestFallbackRenameRacesInProcess(t *testing.T) {
	for _, b := range []struct {
		name   string
		rounds int
		open   func(t *testing.T) memtool.Store
	}{
		{"memstore", 200, backend(t, "memstore")},
		{"filestore", 30, backend(t, "filestore")},
	} {
		t.Run(b.name, func(t *testing.T) { renameRaces(t, b.rounds, b.open, nil) })
	}
	// Through wrappers that answer ErrUnsupported: one that says so in
	// advance (a memtool.Wrapper) and one that Memory finds out about on
	// the first rename or delete, which it then runs again alone.
	for name, wrap := range map[string]func(memtool.Store) memtool.Store{
		"wrapper":    func(s memtool.Store) memtool.Store { return forwarder{s} },
		"unwrapless": func(s memtool.Store) memtool.Store { return unwrapless{s} },
	} {
		t.Run("memstore/"+name, func(t *testing.T) { renameRaces(t, 100, backend(t, "memstore"), wrap) })
	}
}

// backend returns the opener of one of the transcripts' backends.
func backend(t *testing.T, name string) func(t *testing.T) memtool.Store {
	for _, b := range backends {
		if b.name == name {
			return b.open
		}
	}
	t.Fatalf("no backend %q", name)
	return nil
}

// renameRaces runs the races over a store without capabilities, through
// wrap if it is not nil.
func renameRaces(t *testing.T, rounds int, open func(t *testing.T) memtool.Store, wrap func(memtool.Store) memtool.Store) {
	lostCreates, lostEdits, brokenDeletes := 0, 0, 0
	for range rounds {
		var s memtool.Store = storetest.Bare(open(t))
		if wrap != nil {
			s = wrap(s)
		}
		mem := memtool.New(s, nil)
		if r := do(mem, "command", "create", "path", "/memories/old/x.md", "file_text", "x"); r.IsError {
			t.Fatal(r.Text)
		}
		var rn, cr memtool.Result
		storetest.Together(
			func() { rn = do(mem, "command", "rename", "old_path", "/memories/old", "new_path", "/memories/new") },
			func() { cr = do(mem, "command", "create", "path", "/memories/new/notes.md", "file_text", "notes") },
		)
		if got, err := readText(s, "new/notes.md"); !cr.IsError && got != "notes" {
			lostCreates++
			t.Logf("create acknowledged, then %q, %v (rename: %q)", got, err, rn.Text)
		}
		if got, err := readText(s, "new/x.md"); !rn.IsError && got != "x" {
			t.Errorf("rename acknowledged, then new/x.md is %q, %v", got, err)
		}

		if r := do(mem, "command", "create", "path", "/memories/a", "file_text", "v0"); r.IsError {
			t.Fatal(r.Text)
		}
		var ed memtool.Result
		storetest.Together(
			func() { rn = do(mem, "command", "rename", "old_path", "/memories/a", "new_path", "/memories/b") },
			func() {
				ed = do(mem, "command", "str_replace", "path", "/memories/a", "old_str", "v0", "new_str", "v1")
			},
		)
		if !rn.IsError && !ed.IsError {
			if got, err := readText(s, "b"); got != "v1" {
				lostEdits++
				t.Logf("rename and edit acknowledged, then b is %q, %v", got, err)
			}
		}

		// The delete fallback removes a tree entry by entry: a create
		// inside it lands before or after, never in between.
		for _, name := range []string{"a.md", "b.md", "c.md", "sub/d.md"} {
			do(mem, "command", "create", "path", "/memories/tree/"+name, "file_text", name)
		}
		var dl memtool.Result
		storetest.Together(
			func() { dl = do(mem, "command", "delete", "path", "/memories/tree") },
			func() { cr = do(mem, "command", "create", "path", "/memories/tree/new.md", "file_text", "new") },
		)
		entries, err := s.ReadDir(context.Background(), "tree")
		if dl.IsError || err == nil && (cr.IsError || len(entries) != 1 || entries[0].Name != "new.md") {
			brokenDeletes++
			t.Logf("delete: %q, create: %q, then tree holds %+v", dl.Text, cr.Text, entries)
		}
	}
	if lostCreates+lostEdits+brokenDeletes > 0 {
		t.Errorf("of %d rounds each, %d acknowledged creates and %d acknowledged edits were lost, %d deletes failed or left part of the tree",
			rounds, lostCreates, lostEdits, brokenDeletes)
	}
}

// interleaved is a store without Renamer that runs other's write once, just
// before the first operation of its kind on a name with the given prefix:
// another process writing at exactly that moment of a rename.
type interleaved struct {
	memtool.Store // storetest.Bare: no Renamer
	op, prefix    string
	other         func()
	once          sync.Once
}

func (s *interleaved) hook(op, name string) {
	if op == s.op && strings.HasPrefix(name, s.prefix) {
		s.once.Do(s.other)
	}
}

func (s *interleaved) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	s.hook("write", name)
	return s.Store.WriteFile(ctx, name, data, mode)
}

func (s *interleaved) Remove(ctx context.Context, name string) error {
	s.hook("remove", name)
	return s.Store.Remove(ctx, name)
}

// seedTree writes the files (name → text) into s, making their parents.
func seedTree(t *testing.T, s memtool.Store, files map[string]string) {
	t.Helper()
	mem := memtool.New(s, nil)
	for name, text := range files {
		if r := do(mem, "command", "create", "path", "/memories/"+name, "file_text", text); r.IsError {
			t.Fatal(r.Text)
		}
	}
}

// writeFiles writes n new files into the root of s, the i-th (in the
// order written) named name(i), each holding data.
func writeFiles(t *testing.T, s memtool.Store, n int, name func(i int) string, data string) {
	t.Helper()
	for i := range n {
		if err := s.WriteFile(t.Context(), name(i), []byte(data), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
}

func checkTree(t *testing.T, s memtool.Store, files map[string]string) {
	t.Helper()
	for name, want := range files {
		if got, err := readText(s, name); got != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestFallbackLeavesOthersData: another process writes into the
// destination while the copy runs, so the copy fails; or into the source
// after the copy, so the source cannot go. Either way the fallback removes
// only the entries it made or copied, and nothing of the other writer's.
func TestFallbackLeavesOthersData(t *testing.T) {
	src := map[string]string{"src/a.md": "a", "src/x.md": "x of src", "src/sub/b.md": "b", "src/sub/c.md": "c"}
	ctx := context.Background()

	// renameWithOther renames src to dst through the fallback, while the
	// other writer creates name just before the fallback's first op (write
	// or remove) below prefix.
	renameWithOther := func(t *testing.T, op, prefix, name string) (memtool.Store, memtool.Result) {
		inner := memstore.New()
		seedTree(t, inner, src)
		s := &interleaved{Store: storetest.Bare(inner), op: op, prefix: prefix}
		s.other = func() {
			if err := inner.WriteFile(ctx, name, []byte("the other's"), memtool.CreateOnly); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		}
		return inner, do(memtool.New(s, nil), "command", "rename", "old_path", "/memories/src", "new_path", "/memories/dst")
	}

	t.Run("destination", func(t *testing.T) {
		inner, r := renameWithOther(t, "write", "dst/", "dst/x.md")
		if want := "Error: The destination /memories/dst already exists"; r.Text != want {
			t.Errorf("rename: %q, want %q", r.Text, want)
		}
		checkTree(t, inner, src)
		checkTree(t, inner, map[string]string{"dst/x.md": "the other's"})
		// What the copy made is gone again: dst holds only the other's file.
		entries, err := inner.ReadDir(ctx, "dst")
		if err != nil || len(entries) != 1 || entries[0].Name != "x.md" {
			t.Errorf("dst holds %+v, %v; want only x.md", entries, err)
		}
	})

	t.Run("source", func(t *testing.T) {
		inner, r := renameWithOther(t, "remove", "src/", "src/sub/new.md")
		if r.IsError {
			t.Fatalf("rename: %q", r.Text)
		}
		moved := map[string]string{}
		for name, text := range src {
			moved["dst/"+strings.TrimPrefix(name, "src/")] = text
			if _, err := inner.Stat(ctx, name); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("%s was copied but is still there: %v", name, err)
			}
		}
		checkTree(t, inner, moved)
		checkTree(t, inner, map[string]string{"src/sub/new.md": "the other's"})
	})
}

// TestFallbackRenameRacesAcrossProcesses: two Memory values on one store
// stand for two processes (each has its own lock). The fallback is not
// atomic between them, but an acknowledged create of the other one is
// never removed by a rename that fails or succeeds.
func TestFallbackRenameRacesAcrossProcesses(t *testing.T) {
	const rounds = 300
	lost := 0
	for i := range rounds {
		inner := memstore.New()
		files := map[string]string{}
		for j := range 8 {
			files[fmt.Sprintf("src/f%d.md", j)] = fmt.Sprint(j)
		}
		files["src/x.md"] = "x of src"
		seedTree(t, inner, files)
		a, b := memtool.New(storetest.Bare(inner), nil), memtool.New(storetest.Bare(inner), nil)
		target := "/memories/dst/x.md" // collides with a file the rename copies
		if i%2 == 1 {
			target = "/memories/src/y.md" // lands in the source while it is copied
		}
		var cr memtool.Result
		storetest.Together(
			func() { do(a, "command", "rename", "old_path", "/memories/src", "new_path", "/memories/dst") },
			func() { cr = do(b, "command", "create", "path", target, "file_text", "the other's") },
		)
		if cr.IsError {
			continue
		}
		name := strings.TrimPrefix(target, "/memories/")
		got, _ := readText(inner, name)
		if moved, _ := readText(inner, strings.Replace(name, "src/", "dst/", 1)); got != "the other's" && moved != "the other's" {
			lost++
			t.Logf("round %d: the create of %s was acknowledged, then lost", i, target)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost", lost, rounds)
	}
}

// undoFails is a Store without Renamer or RemoveAller (so Memory uses
// its copy-and-remove fallback) on which the second file written under b/
// fails with ErrExist (another process made that name meanwhile) and a
// remove under b/ fails (so the copy cannot be undone).
type undoFails struct {
	memtool.Store
	writes atomic.Int32
}

func (s *undoFails) WriteFile(ctx context.Context, n string, d []byte, m memtool.WriteMode) error {
	if strings.HasPrefix(n, "b/") && s.writes.Add(1) == 2 {
		return &fs.PathError{Op: "write", Path: n, Err: memtool.ErrExist}
	}
	return s.Store.WriteFile(ctx, n, d, m)
}

func (s *undoFails) Remove(ctx context.Context, n string) error {
	if strings.HasPrefix(n, "b/") {
		return &fs.PathError{Op: "remove", Path: n, Err: errors.New("input/output error")}
	}
	return s.Store.Remove(ctx, n)
}

// A rename by the fallback that stops part way and cannot undo its copy
// says so: the model must not read "already exists" (nothing changed)
// while a copy is left at the new name.
func TestPartialMoveSaysSo(t *testing.T) {
	s := &undoFails{Store: memstore.New()}
	m := memtool.New(s, nil)
	ctx := context.Background()
	for _, in := range []string{
		`{"command":"create","path":"/memories/a/x.md","file_text":"x"}`,
		`{"command":"create","path":"/memories/a/y.md","file_text":"y"}`,
	} {
		if r := m.Run(ctx, []byte(in)); r.IsError {
			t.Fatal(r.Text)
		}
	}
	r := m.Run(ctx, []byte(`{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}`))
	v := m.Run(ctx, []byte(`{"command":"view","path":"/memories"}`))
	if !strings.Contains(v.Text, "/memories/b/") {
		t.Fatalf("no copy was left at /memories/b (the view: %q): the test's store did not fail as meant", v.Text)
	}
	want := "Error: The rename command on /memories/a was done only in part: the memory store failed part way. View /memories/a before trying again"
	if r.Text != want {
		t.Errorf("rename answered %q, want %q", r.Text, want)
	}
}
