package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --store helper:BASE opens the files of the Python or TypeScript SDK's
// filesystem memory helper, which keeps /memories/x at BASE/memories/x:
// the model sees the same paths, never /memories/memories/….
func TestHelperStore(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "memories", "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "memories", "projects", "notes.md"), []byte("kept by the Python helper\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runMemtool(t, nil, "", "view", "--store", "helper:"+base, "/memories")
	if code != 0 || !strings.Contains(out, "/memories/projects/notes.md") || strings.Contains(out, "/memories/memories") {
		t.Fatalf("view /memories: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runMemtool(t, nil, "", "view", "--store", "helper:"+base, "/memories/projects/notes.md")
	if code != 0 || !strings.Contains(out, "1\tkept by the Python helper") {
		t.Fatalf("view notes.md: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runMemtool(t, nil, "", "view", "--store", "helper:", "/memories"); code == 0 || !strings.Contains(errOut, "base directory") {
		t.Errorf("helper: without a directory: exit %d, %q", code, errOut)
	}
}
