package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The printf pipeline of docs/mcp.md runs as written (its store in a
// temporary directory): memtool mcp answers the initialize and the
// memory_view written before standard input ends, and exits 0.
func TestDocsMCPPipeline(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```\nprintf '%s\\n' \\\n")
	block, _, ok2 := strings.Cut(rest, "```")
	const docStore = "| memtool mcp --store ~/.memtool/memories"
	if !ok || !ok2 || !strings.Contains(block, docStore) {
		t.Fatalf("docs/mcp.md has no printf | %s block", docStore)
	}
	bin := plainBinary(t)
	store := filepath.Join(t.TempDir(), "memories")
	script := "set -eo pipefail\nprintf '%s\\n' \\\n" + strings.Replace(block, docStore, "| \"$MEMTOOL_BIN\" mcp --store \"$STORE\"", 1)
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = childEnv("MEMTOOL_BIN="+bin, "STORE="+store)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the pipeline failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 answers (initialize, tools/call), got %d:\n%s", len(lines), out)
	}
	var view struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &view); err != nil {
		t.Fatal(err)
	}
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"
	if view.ID != 2 || view.Result.IsError || len(view.Result.Content) != 1 || view.Result.Content[0].Text != want {
		t.Errorf("memory_view answered %s", lines[1])
	}
}
