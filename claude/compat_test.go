package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
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
	for path, want := range map[string]string{
		"/memories/projects/memtool.md": "Here's the content of /memories/projects/memtool.md with line numbers:\n     1\tuses Go\n     2\t",
		"/memories": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"4K\t/memories\n8B\t/memories/notes.md\n4K\t/memories/projects/\n8B\t/memories/projects/memtool.md",
	} {
		if r := mem.Execute(ctx, &memtool.View{Path: path}); r.IsError || r.Text != want {
			t.Errorf("view %s = %q, want %q", path, r.Text, want)
		}
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
