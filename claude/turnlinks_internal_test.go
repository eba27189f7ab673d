package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// A turn of the adapter orders calls through a link in a directory store
// as calls on one path: a create through a link after the delete of the
// directory it leads to.
func TestTurnFollowsThroughLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tool := NewTool(memtool.New(s, nil), nil)
	var msg anthropic.BetaMessage
	if err := json.Unmarshal([]byte(`{"id":"m","type":"message","role":"assistant","model":"m","content":[
		{"type":"tool_use","id":"a","name":"memory","input":{"command":"delete","path":"/memories/real"}},
		{"type":"tool_use","id":"b","name":"memory","input":{"command":"create","path":"/memories/link/x.md","file_text":"x"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	// As the runner's turn is built (NewRunner), and as ToolResults' is.
	runner := tool.follow.build(&msg)
	results := newTurn(t.Context(), tool.mem.Store(), []pendingCall{{id: "a", input: runner.calls[0].input}, {id: "b", input: runner.calls[1].input}})
	for _, tr := range []*turn{runner, results} {
		if got := tr.calls[1].before; !reflect.DeepEqual(got, []int{0}) {
			t.Errorf("the create through the link follows %v, want [0]", got)
		}
	}
}
