package encrypt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// The tests of rename: the wrapper forwards the inner store's atomic rename,
// which moves ciphertexts as they are, and files of the old format (mte1)
// still open after a move.

func text(t *testing.T, s memtool.Store, name string) string {
	t.Helper()
	b, err := s.ReadFile(context.Background(), name, 1<<20)
	if err != nil && !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("%s: %v", name, err)
	}
	return string(b)
}

// TestRenameRacesInProcess runs the turns that lost acknowledged writes
// when the wrapper renamed by Memory's copy-then-remove:
// [rename old→new, create new/notes.md] and [rename a→b, str_replace a],
// each pair at the same moment through one Memory.
func TestRenameRacesInProcess(t *testing.T) {
	key := newKey(t, "k1")
	for _, b := range []struct {
		name   string
		rounds int
		inner  func(t *testing.T) memtool.Store
	}{
		{"memstore", 200, func(*testing.T) memtool.Store { return memstore.New() }},
		{"filestore", 40, func(t *testing.T) memtool.Store { return openDir(t, filepath.Join(t.TempDir(), "m")) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			lostCreates, lostEdits := 0, 0
			for range b.rounds {
				s := wrap(t, b.inner(t), &encrypt.Options{Tenant: "t1"}, key)
				mem := memtool.New(s, nil)
				storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/old/x.md", "file_text": "x"})
				var rn, cr memtool.Result
				storetest.Together(
					func() {
						rn = storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/old", "new_path": "/memories/new"})
					},
					func() {
						cr = storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/new/notes.md", "file_text": "notes"})
					},
				)
				if !cr.IsError && text(t, s, "new/notes.md") != "notes" {
					lostCreates++
				}
				if !rn.IsError && text(t, s, "new/x.md") != "x" {
					t.Errorf("rename acknowledged, new/x.md lost")
				}

				storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/a", "file_text": "v0"})
				var ed memtool.Result
				storetest.Together(
					func() {
						rn = storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/a", "new_path": "/memories/b"})
					},
					func() {
						ed = storetest.Call(t, mem, map[string]any{"command": "str_replace", "path": "/memories/a", "old_str": "v0", "new_str": "v1"})
					},
				)
				if !rn.IsError && !ed.IsError && text(t, s, "b") != "v1" {
					lostEdits++
				}
			}
			if lostCreates+lostEdits > 0 {
				t.Errorf("of %d rounds each, %d acknowledged creates and %d acknowledged edits were lost", b.rounds, lostCreates, lostEdits)
			}
		})
	}
}

// TestRenameRacesAcrossProcesses: several wrappers, each over its own
// file store opened on one directory, stand for processes sharing it (the
// file store's lock is per open, as between processes). Four rename
// different files onto one name at the same moment: exactly one wins, and
// every file is where the answers say. Then a directory rename races a
// create inside its destination from another process.
func TestRenameRacesAcrossProcesses(t *testing.T) {
	key := newKey(t, "k1")
	const rounds = 20
	for round := range rounds {
		dir := filepath.Join(t.TempDir(), "m")
		mems := make([]*memtool.Memory, 4)
		for i := range mems {
			mems[i] = memtool.New(wrap(t, openDir(t, dir), nil, key), nil)
		}
		s := wrap(t, openDir(t, dir), nil, key)
		for i := range mems {
			storetest.Call(t, mems[0], map[string]any{"command": "create", "path": fmt.Sprintf("/memories/src%d.md", i), "file_text": fmt.Sprint("text ", i)})
		}
		results := make([]memtool.Result, len(mems))
		var fns []func()
		for i, mem := range mems {
			fns = append(fns, func() {
				results[i] = storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": fmt.Sprintf("/memories/src%d.md", i), "new_path": "/memories/dst.md"})
			})
		}
		storetest.Together(fns...)
		wins := 0
		for i, r := range results {
			src := text(t, s, fmt.Sprintf("src%d.md", i))
			if r.IsError {
				if src != fmt.Sprint("text ", i) {
					t.Errorf("round %d: rename %d failed (%s) and its source reads %q", round, i, r.Text, src)
				}
				continue
			}
			wins++
			if got := text(t, s, "dst.md"); got != fmt.Sprint("text ", i) || src != "" {
				t.Errorf("round %d: rename %d acknowledged, then dst.md reads %q and the source %q", round, i, got, src)
			}
		}
		if wins != 1 {
			t.Errorf("round %d: %d renames onto one name succeeded", round, wins)
		}

		storetest.Call(t, mems[0], map[string]any{"command": "create", "path": "/memories/old/a.md", "file_text": "a"})
		var rn, cr memtool.Result
		storetest.Together(
			func() {
				rn = storetest.Call(t, mems[0], map[string]any{"command": "rename", "old_path": "/memories/old", "new_path": "/memories/new"})
			},
			func() {
				cr = storetest.Call(t, mems[1], map[string]any{"command": "create", "path": "/memories/new/b.md", "file_text": "b"})
			},
		)
		if !cr.IsError && text(t, s, "new/b.md") != "b" {
			t.Errorf("round %d: the create of new/b.md was acknowledged, then lost (rename: %s)", round, rn.Text)
		}
		if !rn.IsError && text(t, s, "new/a.md") != "a" {
			t.Errorf("round %d: the rename was acknowledged, then new/a.md is lost", round)
		}
	}
}

// TestRenameMovesCiphertext: a rename through Memory moves the stored
// bytes as they are (the inner store's rename, not a copy), to paths where
// they open.
func TestRenameMovesCiphertext(t *testing.T) {
	inner := memstore.New()
	s := wrap(t, inner, nil, newKey(t, "k1"))
	mem := memtool.New(s, nil)
	ctx := context.Background()
	storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/d/x/a.md", "file_text": "alpha"})
	storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/d/b.md", "file_text": "beta"})
	before, _ := inner.ReadFile(ctx, "d/x/a.md", 1<<20)
	if r := storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e/f"}); r.IsError {
		t.Fatal(r.Text)
	}
	for name, want := range map[string]string{"e/f/x/a.md": "alpha", "e/f/b.md": "beta"} {
		if got, err := s.ReadFile(ctx, name, 1<<20); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	if after, _ := inner.ReadFile(ctx, "e/f/x/a.md", 1<<20); !bytes.Equal(before, after) {
		t.Error("the moved file was rewritten")
	}
	if _, err := inner.Stat(ctx, "d"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the old directory is still there: %v", err)
	}
}

// The fixture testdata/mte1 holds files that memtool wrote before the mte2
// format, with this key, for tenant "alice", at their names there.
const mte1Key = "old:AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

var mte1Files = map[string]string{
	"c.md":       "written by memtool before mte2\n",
	"d/a.md":     "alpha, sealed in mte1\n",
	"d/sub/b.md": "beta, sealed in mte1\n",
}

// seedMTE1 copies the fixture into inner, byte for byte.
func seedMTE1(t *testing.T, inner memtool.Store) {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join("testdata", "mte1")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			return inner.Mkdir(ctx, name)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return inner.WriteFile(ctx, name, b, memtool.CreateOnly)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func magicOf(t *testing.T, inner memtool.Store, name string) string {
	t.Helper()
	b, err := inner.ReadFile(context.Background(), name, 1<<20)
	if err != nil || len(b) < 4 {
		t.Fatalf("%s: %q, %v", name, b, err)
	}
	return string(b[:4])
}

// TestMTE1 opens files of the old, path-bound format, renames them (a file
// and a directory) and opens them at their new paths; an old file copied
// to another path still does not open there.
func TestMTE1(t *testing.T) {
	keys, err := encrypt.ParseKeys(mte1Key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, inner := range map[string]memtool.Store{"memstore": memstore.New(), "filestore": openDir(t, filepath.Join(t.TempDir(), "m"))} {
		t.Run(name, func(t *testing.T) {
			seedMTE1(t, inner)
			s := wrap(t, inner, &encrypt.Options{Tenant: "alice"}, keys...)
			for name, want := range mte1Files {
				if magicOf(t, inner, name) != "mte1" {
					t.Fatalf("%s: the fixture is not in the old format", name)
				}
				if got := text(t, s, name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}

			// An old file at another path fails, as it always did.
			stored, _ := inner.ReadFile(ctx, "c.md", 1<<20)
			inner.WriteFile(ctx, "copy.md", stored, memtool.CreateOnly)
			if _, err := s.ReadFile(ctx, "copy.md", 1<<20); !errors.Is(err, encrypt.ErrAuth) {
				t.Errorf("an mte1 file copied to another path: %v, want ErrAuth", err)
			}

			mem := memtool.New(s, nil)
			for _, mv := range [][2]string{{"c.md", "e/c2.md"}, {"d", "f/g"}} {
				if r := storetest.Call(t, mem, map[string]any{"command": "rename", "old_path": "/memories/" + mv[0], "new_path": "/memories/" + mv[1]}); r.IsError {
					t.Fatalf("rename %s: %s", mv[0], r.Text)
				}
			}
			for old, moved := range map[string]string{"c.md": "e/c2.md", "d/a.md": "f/g/a.md", "d/sub/b.md": "f/g/sub/b.md"} {
				if got := text(t, s, moved); got != mte1Files[old] {
					t.Errorf("%s moved to %s: %q, want %q", old, moved, got, mte1Files[old])
				}
				if m := magicOf(t, inner, moved); m != "mte2" {
					t.Errorf("%s after the rename: format %q, want mte2", moved, m)
				}
			}
		})
	}
}

// TestMTE1RenameNeedsItsKey: an old file whose key is not configured cannot
// be sealed again for its move, so the rename is refused and changes
// nothing (moved, it would never open again, even with its key).
func TestMTE1RenameNeedsItsKey(t *testing.T) {
	inner := memstore.New()
	seedMTE1(t, inner)
	s := wrap(t, inner, &encrypt.Options{Tenant: "alice"}, newKey(t, "k2"))
	ctx := context.Background()
	before, _ := inner.ReadFile(ctx, "d/sub/b.md", 1<<20)
	r := storetest.Call(t, memtool.New(s, nil), map[string]any{"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"})
	// Either file of d may be the first that is found.
	want := `Error: Cannot rename /memories/d: the file /memories/d/sub/b.md was encrypted by an older memtool for its current path, and it cannot be opened to encrypt it for the new one: it was encrypted with key "old", which is not configured. Nothing was changed.`
	if !r.IsError || (r.Text != want && r.Text != strings.Replace(want, "sub/b.md", "a.md", 1)) {
		t.Errorf("rename: %q", r.Text)
	}
	if after, _ := inner.ReadFile(ctx, "d/sub/b.md", 1<<20); !bytes.Equal(before, after) {
		t.Error("the old file changed")
	}
	if _, err := inner.Stat(ctx, "e"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the destination exists: %v", err)
	}
	var ee *encrypt.Error
	err := s.(memtool.Renamer).Rename(ctx, "c.md", "e.md")
	if !errors.Is(err, encrypt.ErrUnknownKey) || !errors.As(err, &ee) || ee.Path != "/memories/c.md" {
		t.Errorf("Rename: %v, want an *Error with ErrUnknownKey", err)
	}
}
