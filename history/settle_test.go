package history

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
)

// TestSettleNumbersCutOffDelete: a delete cut off after it moved the file
// into the trash and before it numbered the file's version (here the
// move to the version's place fails; in life the process is killed)
// leaves the file gone and no version listed. Settle finishes it: the
// version is listed and holds the content, as the delete promised.
func TestSettleNumbersCutOffDelete(t *testing.T) {
	ctx := context.Background()
	inner := newHooked()
	s := newStore(inner, nil)
	must.Succeed(t, s.WriteFile(ctx, "notes.md", []byte("kept words\n"), memtool.CreateOnly))
	cut := true
	inner.rename = func(oldname, _ string) (bool, error) {
		if cut && strings.HasPrefix(oldname, trashDir+"/") {
			return true, errors.New("killed")
		}
		return false, nil
	}
	must.Succeed(t, s.Remove(ctx, "notes.md"))
	cut = false
	if _, err := inner.Stat(ctx, "notes.md"); !errors.Is(err, memtool.ErrNotExist) {
		t.Fatalf("the deleted file: %v, want it gone", err)
	}
	vs, err := Versions(ctx, inner, "/memories/notes.md")
	must.Succeed(t, err)
	if len(vs) != 0 {
		t.Fatalf("versions before the delete was finished: %v, want none (this test cuts the delete off too late)", vs)
	}
	s.Settle(ctx)
	vs, err = Versions(ctx, inner, "/memories/notes.md")
	must.Succeed(t, err)
	if len(vs) != 1 || vs[0].Op != "delete" {
		t.Fatalf("versions once settled: %v, want the delete's", vs)
	}
	data, err := Read(ctx, inner, "/memories/notes.md", vs[0].N)
	if err != nil || string(data) != "kept words\n" {
		t.Errorf("the delete's version: %q, %v; want the deleted content", data, err)
	}
	if left := trashLeft(t, inner); len(left) != 0 {
		t.Errorf("the trash still holds %v once settled", left)
	}
}

// Settle on a store without rename (objectstore's stores have none where
// the service cannot move; a store a renaming process shared, or its
// policy before, left a delete's slot) leaves the trash as it is, as a
// change through such a store does: the deletes there are finished by
// moves, which it cannot make. It panicked on the missing renamer,
// failing memtool history and the server's versions routes.
func TestSettleWithoutRenameLeavesTrash(t *testing.T) {
	ctx := context.Background()
	plain := memstore.New()
	stale := trashDir + "/1000-LEFTBYACRASH"
	_, err := memtool.MkdirAll(ctx, plain, stale)
	must.Succeed(t, err)
	must.Succeed(t, plain.WriteFile(ctx, stale+"/"+pathFile, []byte("notes.md"), memtool.CreateOnly))
	must.Succeed(t, plain.WriteFile(ctx, stale+"/"+treeName, []byte("kept words\n"), memtool.CreateOnly))
	s := newStore(withoutRename{plain}, nil)
	s.Settle(ctx)
	if data, err := plain.ReadFile(ctx, stale+"/"+treeName, 100); err != nil || string(data) != "kept words\n" {
		t.Errorf("the delete left in the trash: %q, %v; want it kept for a store that renames", data, err)
	}
}

// withoutRename is a store that has no Rename (nor RemoveAll).
type withoutRename struct{ memtool.Store }
