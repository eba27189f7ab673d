package memtool_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// brokenDir fails ReadDir of one directory with an I/O error.
type brokenDir struct {
	memtool.Store
	dir string
}

var errIO = errors.New("input/output error")

func (s brokenDir) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if name == s.dir {
		return nil, errIO
	}
	return s.Store.ReadDir(ctx, name)
}

// A subdirectory that cannot be listed does not hide the rest of a
// listing; the directory asked for itself failing is an internal error.
func TestListingAroundAnUnreadableSubdirectory(t *testing.T) {
	inner := memstore.New()
	mem := memtool.New(inner, nil)
	for _, p := range []string{"/memories/a/x.md", "/memories/bad/y.md", "/memories/c.md"} {
		if r := do(mem, "command", "create", "path", p, "file_text", "t"); r.IsError {
			t.Fatal(r.Text)
		}
	}
	quiet := &memtool.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	mem = memtool.New(brokenDir{inner, "bad"}, quiet)
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
		"4K\t/memories\n4K\t/memories/a/\n1B\t/memories/a/x.md\n4K\t/memories/bad/\n1B\t/memories/c.md"
	if r := do(mem, "command", "view", "path", "/memories"); r.IsError || r.Text != want {
		t.Errorf("view /memories = %q (error %v), want\n%q", r.Text, r.IsError, want)
	}
	if r := do(mem, "command", "view", "path", "/memories/bad"); !r.IsError || r.Text != "Error: Internal error while running view on /memories/bad" {
		t.Errorf("view /memories/bad = %q, want the internal error", r.Text)
	}
}
