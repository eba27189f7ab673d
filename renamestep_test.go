package memtool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// createInRename is a store whose Rename first runs create through mem, as
// a call of the same turn landing between the rename's check of the tree
// it moves and its move. If mem would make that create wait (the rename
// holds writes alone), it runs once the rename is done, as it would then.
type createInRename struct {
	*memstore.Store
	mem   *memtool.Memory
	input string
	done  chan memtool.Result
}

func (s *createInRename) Rename(ctx context.Context, oldname, newname string) error {
	go func() { s.done <- s.mem.Run(context.Background(), []byte(s.input)) }()
	if !memtool.WritesHeldAlone(s.mem) {
		// Nothing keeps the create out: let it land before the move.
		<-s.done
		s.done <- memtool.Result{}
	}
	return s.Store.Rename(ctx, oldname, newname)
}

// TestRenameCheckAndMoveAreOneStep: a create deep in a directory, run in
// the same turn as a rename of that directory to a deeper name, could land
// between the rename's check of the moved paths and its move: the new file
// was moved past memtool.MaxDepth, where no command could reach it. Within one
// Memory such a rename now holds writes alone, so the create lands before
// the check (and the rename is refused) or after the move.
func TestRenameCheckAndMoveAreOneStep(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	s := &createInRename{Store: inner, done: make(chan memtool.Result, 2)}
	s.mem = memtool.New(s, nil)
	deep := "/memories/a" + strings.Repeat("/d", 30) + "/f.md" // 32 levels
	in, _ := json.Marshal(map[string]string{"command": "create", "path": deep, "file_text": "new"})
	s.input = string(in)
	if r := s.mem.Run(ctx, []byte(`{"command":"create","path":"/memories/a/x.md","file_text":"x"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	r := s.mem.Run(ctx, []byte(`{"command":"rename","old_path":"/memories/a","new_path":"/memories/n/a"}`))
	if r.IsError {
		t.Fatalf("rename: %s", r.Text)
	}
	if cr := <-s.done; cr.IsError {
		t.Fatalf("create: %s", cr.Text)
	}
	err := memtool.Walk(ctx, inner, "", func(name string, _ memtool.FileInfo) error {
		if strings.Count(name, "/")+1 > memtool.MaxDepth || len(memtool.VirtualPath(name)) > memtool.MaxPathBytes {
			t.Errorf("%s is past the path gate's caps: no command can reach it", memtool.VirtualPath(name))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
