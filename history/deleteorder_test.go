package history_test

import (
	"context"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/storeurl"
)

// afterTrashMove is a store that runs a hook once, right after a rename
// of a deleted entry into the wrapper's trash: the instant between a
// delete's move (when it takes effect) and the numbering of its versions.
type afterTrashMove struct {
	memtool.Store
	once sync.Once
	hook func()
}

func (s *afterTrashMove) Rename(ctx context.Context, oldname, newname string) error {
	err := memtool.ForwardRename(ctx, s.Store, oldname, newname)
	if err == nil && path.Base(newname) == "tree" && s.hook != nil {
		s.once.Do(s.hook)
	}
	return err
}

// TestDeleteNumberedBeforeLaterEdits: a delete in one process takes effect
// (its move); before it numbers its version, another process creates the
// file again and edits it. The deleted content was replaced first, so its
// version must be numbered below the edit's: a revert to the newest
// version must bring back what the edit replaced, not the content deleted
// before it. On a real directory and SQLite, each opened twice.
func TestDeleteNumberedBeforeLaterEdits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for kind, url := range map[string]string{"dir": filepath.Join(dir, "store"), "sqlite": "sqlite://" + filepath.Join(dir, "m.db")} {
		t.Run(kind, func(t *testing.T) {
			open := func() memtool.Store {
				s, closer, err := storeurl.Open(ctx, url, &storeurl.Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { closer.Close() })
				return s
			}
			innerA := &afterTrashMove{Store: open()}
			innerB := open()
			opts := &history.Options{MaxVersions: 100, MaxAge: -1}
			a, b := history.New(innerA, opts), history.New(innerB, opts)
			if err := a.WriteFile(ctx, "f.md", []byte("deleted"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			innerA.hook = func() {
				if err := b.WriteFile(ctx, "f.md", []byte("new"), memtool.CreateOnly); err != nil {
					t.Error(err)
				}
				if err := b.Update(ctx, "f.md", 1<<20, func([]byte) ([]byte, error) { return []byte("edited"), nil }); err != nil {
					t.Error(err)
				}
			}
			if err := a.Remove(ctx, "f.md"); err != nil {
				t.Fatal(err)
			}
			vs, err := history.Versions(ctx, innerB, "/memories/f.md")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				data, err := history.Read(ctx, innerB, "/memories/f.md", v.N)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v.Op+":"+string(data))
			}
			if len(got) != 2 || got[0] != "delete:deleted" || got[1] != "update:new" {
				t.Errorf("versions, oldest first: %q; want the deleted content, then the one the later edit replaced (%q)", got, []string{"delete:deleted", "update:new"})
			}
		})
	}
}
