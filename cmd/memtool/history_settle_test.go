package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A delete that a crash cut off between moving the file into history's
// trash and numbering its version (the store left as such a process
// leaves it) is finished by memtool history before it lists: the
// version is listed, diff and revert find it.
func TestHistoryFinishesCutOffDelete(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "memories")
	vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"history":{}}`)}
	mustRunCLI(t, vars, "", "create", "--store", store, "--text", "kept words", "/memories/notes.md")

	slot := filepath.Join(store, ".memtool-history", "trash", fmt.Sprintf("%d-CUTOFF", time.Now().UnixNano()))
	if err := os.MkdirAll(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(slot, "path"), []byte("notes.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(store, "notes.md"), filepath.Join(slot, "tree")); err != nil {
		t.Fatal(err)
	}

	out := mustRunCLI(t, vars, "", "history", "--store", store, "/memories/notes.md")
	if !strings.Contains(out, "\tdelete\t") {
		t.Fatalf("memtool history after a delete cut off part way:\n%s\nwant the delete's version", out)
	}
	n, _, _ := strings.Cut(out, "\t")
	mustRunCLI(t, vars, "", "revert", "--store", store, "/memories/notes.md", "--to", n)
	if got := mustRunCLI(t, vars, "", "view", "--store", store, "/memories/notes.md"); !strings.Contains(got, "kept words") {
		t.Errorf("after revert --to %s: %q", n, got)
	}
}
