package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/memstore"
)

// A directory written by the Python or TypeScript helper (files under
// <base>/memories) opens with the model's paths as those helpers had them.
func TestOpenHelperDir(t *testing.T) {
	base := t.TempDir()
	for name, content := range map[string]string{
		"memories/notes.md":            "# Notes\n",
		"memories/projects/memtool.md": "uses Go\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := claude.OpenHelperDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mem := memtool.New(store, nil)
	ctx := context.Background()
	r := mem.Execute(ctx, &memtool.View{Path: "/memories/projects/memtool.md"})
	if r.IsError || !strings.Contains(r.Text, "uses Go") {
		t.Errorf("view: %q", r.Text)
	}
	r = mem.Execute(ctx, &memtool.View{Path: "/memories"})
	if r.IsError || strings.Contains(r.Text, "/memories/memories") || !strings.Contains(r.Text, "/memories/notes.md") {
		t.Errorf("view /memories: %q", r.Text)
	}
	if r := mem.Execute(ctx, &memtool.Create{Path: "/memories/new.md", FileText: "x"}); r.IsError {
		t.Fatal(r.Text)
	}
	if _, err := os.Stat(filepath.Join(base, "memories", "new.md")); err != nil {
		t.Errorf("a file the model creates is not where the helpers look: %v", err)
	}

	// A new base gets its memories directory, as the helpers create it.
	fresh := filepath.Join(t.TempDir(), "agent")
	s2, err := claude.OpenHelperDir(fresh)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if fi, err := os.Stat(filepath.Join(fresh, "memories")); err != nil || !fi.IsDir() {
		t.Errorf("memories directory: %v", err)
	}
	if got := claude.HelperDir("base"); got != filepath.Join("base", "memories") {
		t.Errorf("HelperDir = %q", got)
	}
}

// ClearAll deletes every file and directory under /memories and leaves it
// empty and usable.
func TestClearAll(t *testing.T) {
	ctx := context.Background()
	mem := memtool.New(memstore.New(), nil)
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
