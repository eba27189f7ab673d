package workdir_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/workdir"
)

// With your own loop, once the context has ended RunTools starts no more
// calls, as the SDK runner starts none: the file tools do not look at the
// context, so a turn of writes cut off by the caller (a deadline, ^C) went
// on writing every file. Each call not run is answered, with is_error, so
// that every tool_use still has its tool_result.
func TestRunToolsStopsWhenContextEnds(t *testing.T) {
	work := t.TempDir()
	hands, err := workdir.Open(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	var msg anthropic.BetaMessage
	if err := json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","stop_reason":"tool_use","content":[
		{"type":"tool_use","id":"toolu_1","name":"write","input":{"file_path":"a.txt","content":"a"}},
		{"type":"tool_use","id":"toolu_2","name":"write","input":{"file_path":"b.txt","content":"b"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	results := claude.RunTools(ctx, &msg, hands.Tools()...)
	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(work, name)); err == nil {
			t.Errorf("%s was written after the context ended", name)
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	for i, r := range results {
		tr := r.OfToolResult
		if tr == nil || tr.ToolUseID != []string{"toolu_1", "toolu_2"}[i] || !tr.IsError.Valid() || !tr.IsError.Value {
			t.Errorf("result %d: %+v, want an error answering toolu_%d", i, tr, i+1)
		}
	}
}
