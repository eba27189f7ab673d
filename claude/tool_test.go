package claude_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
)

// Tool.Execute, as the SDK runner calls it, reports failures as a
// *CommandError that the runner turns back into memtool's exact text.
func TestExecute(t *testing.T) {
	tool := claude.NewTool(newMemory(), nil)
	ctx := context.Background()
	content, err := tool.Execute(ctx, json.RawMessage(`{"command":"create","path":"/memories/a","file_text":"hi"}`))
	if err != nil || len(content) != 1 || content[0].OfText.Text != "File created successfully at: /memories/a" {
		t.Fatalf("create: %v %+v", err, content)
	}
	_, err = tool.Execute(ctx, json.RawMessage(`{"command":"nope"}`))
	var ce *claude.CommandError
	if !errors.As(err, &ce) || !ce.Result.IsError {
		t.Fatalf("bad command: err %v", err)
	}
	if got := "Error: " + err.Error(); got != ce.Result.Text || got != "Error: Unknown command: nope" {
		t.Errorf("runner would send %q; memtool's text is %q", got, ce.Result.Text)
	}
}

// ClearAll deletes every file and directory under /memories and leaves it
// empty and usable.
func TestClearAll(t *testing.T) {
	ctx := context.Background()
	mem := newMemory()
	for _, c := range []memtool.Command{
		&memtool.Create{Path: "/memories/a.md", FileText: "a"},
		&memtool.Create{Path: "/memories/d/e/f.md", FileText: "f"},
	} {
		if r := mem.Execute(ctx, c); r.IsError {
			t.Fatal(r.Text)
		}
	}
	tool := claude.NewTool(mem, nil)
	if err := tool.ClearAll(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := mem.Store().ReadDir(ctx, "")
	if err != nil || len(entries) != 0 {
		t.Errorf("after ClearAll: %v, %v", entries, err)
	}
	if err := tool.ClearAll(ctx); err != nil {
		t.Errorf("ClearAll on an empty memory: %v", err)
	}
	if r := mem.Execute(ctx, &memtool.Create{Path: "/memories/a.md", FileText: "again"}); r.IsError {
		t.Errorf("create after ClearAll: %s", r.Text)
	}
}
