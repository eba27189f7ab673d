package history

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
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
