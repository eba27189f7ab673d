package history

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
)

// texts returns the kept versions of name as "N op content".
func texts(t *testing.T, inner memtool.Store, name string) []string {
	t.Helper()
	ctx := context.Background()
	vs, err := Versions(ctx, inner, memtool.VirtualPath(name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		data, err := Read(ctx, inner, memtool.VirtualPath(name), v.N)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{string(rune('0' + v.N)), v.Op, string(data)}, " "))
	}
	return out
}

// TestSweep: a directory delete whose process died after moving the tree
// into the trash is finished by the next delete, of any process:
// the files become versions of their paths, and the trash is emptied.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	must.Succeed(t, inner.Mkdir(ctx, "d"))
	must.Succeed(t, inner.Mkdir(ctx, "d/sub"))
	must.Succeed(t, inner.WriteFile(ctx, "d/a", []byte("A"), memtool.CreateOnly))
	must.Succeed(t, inner.WriteFile(ctx, "d/sub/b", []byte("B"), memtool.CreateOnly))

	dead := newStore(inner, nil)
	if _, err := dead.toTrash(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	// It died here.
	other := New(inner, nil)
	if _, err := other.Stat(ctx, "d"); !errors.Is(err, memtool.ErrNotExist) {
		t.Fatalf("the deleted directory: %v", err)
	}
	must.Succeed(t, other.WriteFile(ctx, "e", nil, memtool.CreateOnly))
	must.Succeed(t, other.Remove(ctx, "e"))

	if got := texts(t, inner, "d/a"); !reflect.DeepEqual(got, []string{"1 delete A"}) {
		t.Errorf("d/a: %q", got)
	}
	if got := texts(t, inner, "d/sub/b"); !reflect.DeepEqual(got, []string{"1 delete B"}) {
		t.Errorf("d/sub/b: %q", got)
	}
	if entries, err := inner.ReadDir(ctx, trashDir); err != nil || len(entries) != 0 {
		t.Errorf("the trash after the sweep: %v, %v", entries, err)
	}
}

// TestCounterAfterOldVersions: versions numbered by a memtool without a
// counter are followed, not overwritten or renumbered.
func TestCounterAfterOldVersions(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	dir := fileDir("a")
	must.Succeed(t, inner.Mkdir(ctx, DirName))
	must.Succeed(t, inner.Mkdir(ctx, dir))
	must.Succeed(t, inner.WriteFile(ctx, path.Join(dir, pathFile), []byte("a"), memtool.CreateOnly))
	must.Succeed(t, inner.WriteFile(ctx, path.Join(dir, fmt.Sprintf("000007-%d-update", time.Now().UnixNano())), []byte("seven"), memtool.CreateOnly))
	must.Succeed(t, inner.WriteFile(ctx, "a", []byte("eight"), memtool.CreateOnly))
	s := New(inner, nil)
	must.Succeed(t, s.WriteFile(ctx, "a", []byte("nine"), memtool.Replace))
	must.Succeed(t, s.Remove(ctx, "a"))
	vs, err := Versions(ctx, inner, "/memories/a")
	if err != nil || len(vs) != 3 || vs[0].N != 7 || vs[1].N != 8 || vs[2].N != 9 {
		t.Errorf("versions %+v, %v; want 7, 8, 9", vs, err)
	}
}

// TestTombstone: on a store without rename, a delete whose process died
// between its two steps leaves a tombstone. Every wrapper treats it as
// gone; a write in its place reports the store busy until the tombstone is
// stale, and then replaces it. Its content was kept by the delete; the
// write keeps its own (a delete that is only stalled would remove it).
func TestTombstone(t *testing.T) {
	ctx := context.Background()
	key, err := encrypt.NewKey("")
	must.Succeed(t, err)
	// encrypt forwards the inner store's Renamer; hide memstore's.
	inner, err := encrypt.New(struct{ memtool.Store }{memstore.New()}, []encrypt.Key{key}, nil)
	must.Succeed(t, err)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	opts := &Options{Now: func() time.Time { return now }}
	s := New(inner, opts)
	if memtool.Has[memtool.Renamer](s) {
		t.Fatal("the wrapper renames over a store that cannot")
	}
	if err := s.(memtool.Renamer).Rename(ctx, "a", "b"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Rename over a store that cannot: %v, want ErrUnsupported", err)
	}
	must.Succeed(t, s.Mkdir(ctx, "d"))
	must.Succeed(t, s.WriteFile(ctx, "d/f", []byte("kept"), memtool.CreateOnly))
	if _, _, _, err := newStore(inner, opts).entomb(ctx, "d/f"); err != nil {
		t.Fatal(err)
	}
	// It died here.
	if _, err := s.Stat(ctx, "d/f"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Stat: %v", err)
	}
	if _, err := s.ReadFile(ctx, "d/f", 1<<20); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("ReadFile: %v", err)
	}
	if entries, err := s.ReadDir(ctx, "d"); err != nil || len(entries) != 0 {
		t.Errorf("ReadDir: %v, %v", entries, err)
	}
	if err := s.Update(ctx, "d/f", 1<<20, func(b []byte) ([]byte, error) { return b, nil }); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Update: %v", err)
	}
	if err := s.Remove(ctx, "d/f"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Remove: %v", err)
	}
	for _, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace} {
		if err := s.WriteFile(ctx, "d/f", []byte("new"), mode); !errors.Is(err, memtool.ErrBusy) {
			t.Errorf("WriteFile (mode %d) over a fresh tombstone: %v, want ErrBusy", mode, err)
		}
	}
	now = now.Add(staleTombstone + time.Second)
	must.Succeed(t, s.WriteFile(ctx, "d/f", []byte("new"), memtool.CreateOnly))
	if data, err := s.ReadFile(ctx, "d/f", 1<<20); string(data) != "new" || err != nil {
		t.Errorf("after the write: %q, %v", data, err)
	}
	if got := texts(t, inner, "d/f"); !reflect.DeepEqual(got, []string{"1 delete kept", "2 delete new"}) {
		t.Errorf("versions %q", got)
	}
	if err := s.WriteFile(ctx, "d/g", tombstone(now), memtool.CreateOnly); !errors.Is(err, errTombstoneContent) {
		t.Errorf("writing a tombstone's content: %v", err)
	}
	if err := s.Update(ctx, "d/f", 1<<20, func([]byte) ([]byte, error) { return tombstone(now), nil }); !errors.Is(err, errTombstoneContent) {
		t.Errorf("editing a file into a tombstone's content: %v", err)
	}
}

// TestPruneIgnoresUnsettledVersions: a version numbered above the
// pruner's own may be another writer's, saved before its change and
// dropped again if the change fails; it must not push the pruner's
// settled version out, or once it is dropped nothing is kept.
func TestPruneIgnoresUnsettledVersions(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	s := newStore(inner, &Options{MaxVersions: 1})
	mine, err := s.save(ctx, "f", []byte("settled"), "delete")
	if err != nil {
		t.Fatal(err)
	}
	pending, err := s.save(ctx, "f", []byte("pending"), "update")
	if err != nil {
		t.Fatal(err)
	}
	s.prune(ctx, "f", mine)
	s.drop(ctx, pending) // its change failed
	vs, err := Versions(ctx, inner, "/memories/f")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Op != "delete" {
		t.Fatalf("versions after the pending one was dropped: %+v", vs)
	}
	// A settled version above it does push it out.
	newer, err := s.save(ctx, "f", []byte("newer"), "update")
	if err != nil {
		t.Fatal(err)
	}
	s.prune(ctx, "f", newer)
	if vs, _ := Versions(ctx, inner, "/memories/f"); len(vs) != 1 || vs[0].Op != "update" {
		t.Fatalf("versions after a newer settled one: %+v", vs)
	}
}

// TestUnchangedUpdateKeepsNoVersion: an edit that leaves the content as
// it is changes nothing, so it keeps no version either.
func TestUnchangedUpdateKeepsNoVersion(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	s := New(inner, nil)
	if err := s.WriteFile(ctx, "f", []byte("same"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, "f", 1<<20, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if vs, err := Versions(ctx, inner, "/memories/f"); err != nil || len(vs) != 0 {
		t.Fatalf("versions after an unchanged edit: %+v, %v", vs, err)
	}
	if err := s.Update(ctx, "f", 1<<20, func([]byte) ([]byte, error) { return []byte("changed"), nil }); err != nil {
		t.Fatal(err)
	}
	if vs, _ := Versions(ctx, inner, "/memories/f"); len(vs) != 1 {
		t.Fatalf("versions after a real edit: %+v", vs)
	}
}
