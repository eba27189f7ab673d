package memtool_test

import (
	"context"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// TestMoveKeepsEditAfterCopy: over a store without Renamer, Move copies
// and then removes. An edit that another writer (another process, or the
// resource API beside a Memory) makes to a file after it was copied and
// before the copies are done must not be lost: the source is removed only
// while it still holds what was copied, so the edit ends up in the moved
// file (or, failing that, stays in the source).
func TestMoveKeepsEditAfterCopy(t *testing.T) {
	ctx := context.Background()
	edit := func(inner memtool.Store, name string) func() {
		return func() {
			err := inner.Update(ctx, name, 1<<20, func(old []byte) ([]byte, error) {
				return append(old, " edited"...), nil
			})
			if err != nil {
				t.Errorf("the other writer's edit of %s: %v", name, err)
			}
		}
	}
	// kept reports whether text is in the moved file or still in the
	// source.
	kept := func(inner memtool.Store, src, dst, text string) bool {
		got, _ := readText(inner, dst)
		left, _ := readText(inner, src)
		return got == text || left == text
	}

	t.Run("file", func(t *testing.T) {
		_, inner := newTree(t, "a")
		// The edit lands just before the copy is written: after a was read.
		s := &interleaved{Store: storetest.Bare(inner), op: "write", prefix: "b"}
		s.other = edit(inner, "a")
		must.Succeed(t, memtool.Move(ctx, s, "a", "b", 1<<20))
		if !kept(inner, "a", "b", "text of a edited") {
			b, errb := readText(inner, "b")
			a, erra := readText(inner, "a")
			t.Errorf("the edit of a is lost: b = %q, %v; a = %q, %v", b, errb, a, erra)
		}
	})

	t.Run("tree", func(t *testing.T) {
		_, inner := newTree(t, "d/", "d/a", "d/sub/", "d/sub/b")
		// Both files are edited just before the first copy is written,
		// so at least one of them after it was read.
		s := &interleaved{Store: storetest.Bare(inner), op: "write", prefix: "m/"}
		s.other = func() { edit(inner, "d/a")(); edit(inner, "d/sub/b")() }
		must.Succeed(t, memtool.Move(ctx, s, "d", "m", 1<<20))
		for _, f := range []string{"a", "sub/b"} {
			if !kept(inner, "d/"+f, "m/"+f, "text of d/"+f+" edited") {
				got, _ := readText(inner, "m/"+f)
				t.Errorf("the edit of d/%s is lost: m/%s = %q", f, f, got)
			}
		}
		wantNames(t, inner, "m/", "m/a", "m/sub/", "m/sub/b")
	})

	t.Run("both", func(t *testing.T) {
		// The copy is changed too, after the source: neither change is
		// overwritten, and the source stays.
		_, inner := newTree(t, "a")
		s := &interleaved{Store: storetest.Bare(inner), op: "write", prefix: "b"}
		s.other = func() { must.Succeed(t, inner.WriteFile(ctx, "a", []byte("a2"), memtool.Replace)) }
		other := func() { must.Succeed(t, inner.WriteFile(ctx, "b", []byte("b2"), memtool.Replace)) }
		must.Succeed(t, memtool.Move(ctx, &editCopy{Store: s, edit: other}, "a", "b", 1<<20))
		checkTree(t, inner, map[string]string{"a": "a2", "b": "b2"})
	})

	t.Run("memory", func(t *testing.T) {
		// Another process's str_replace while a Memory's rename copies.
		_, inner := newTree(t)
		seedTree(t, inner, map[string]string{"src/x.md": "v0"})
		other := memtool.New(storetest.Bare(inner), nil)
		s := &interleaved{Store: storetest.Bare(inner), op: "write", prefix: "dst/x.md"}
		var ed memtool.Result
		s.other = func() {
			ed = do(other, "command", "str_replace", "path", "/memories/src/x.md", "old_str", "v0", "new_str", "v1")
		}
		rn := do(memtool.New(s, nil), "command", "rename", "old_path", "/memories/src", "new_path", "/memories/dst")
		if rn.IsError || ed.IsError {
			t.Fatalf("rename: %q; edit: %q", rn.Text, ed.Text)
		}
		if !kept(inner, "src/x.md", "dst/x.md", "v1") {
			got, _ := readText(inner, "dst/x.md")
			t.Errorf("the acknowledged edit is lost: dst/x.md = %q", got)
		}
	})
}

// editCopy runs edit just before its second ReadFile: after a Move
// copied a file, before it checks it.
type editCopy struct {
	memtool.Store
	edit  func()
	first string
	done  bool
}

func (s *editCopy) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if s.first == "" {
		s.first = name
	} else if !s.done {
		s.done = true
		s.edit()
	}
	return s.Store.ReadFile(ctx, name, limit)
}
