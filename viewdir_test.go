package memtool_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// unlistable is a store on which d reads as a directory (ReadFile's
// ErrIsDir) but cannot be listed, and Stat calls it irregular: a store
// that breaks ReadFile's contract, so that a view's listing fails.
type unlistable struct{ memtool.Store }

func (s unlistable) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if name == "d" {
		return memtool.FileInfo{Name: "d", Type: fs.ModeIrregular}, nil
	}
	return s.Store.Stat(ctx, name)
}

func (s unlistable) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if name == "d" {
		return nil, errors.New("permission denied")
	}
	return s.Store.ReadDir(ctx, name)
}

// A directory that ReadFile names as one is listed without a Stat; should
// its listing fail, the view asks Stat what is there, as before.
func TestDirectoryViewWithoutStat(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	if err := inner.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := inner.WriteFile(ctx, "d/a.md", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := &statCounter{readCounter: readCounter{Store: inner}}
	r := do(memtool.New(s, nil), "command", "view", "path", "/memories/d")
	want := "Here're the files and directories up to 2 levels deep in /memories/d, excluding hidden items and node_modules:\n4K\t/memories/d\n1B\t/memories/d/a.md"
	if r.Text != want {
		t.Errorf("view = %q, want %q", r.Text, want)
	}
	if n := s.stats.Load(); n != 0 {
		t.Errorf("a directory view made %d Stat calls, want 0", n)
	}

	r = do(memtool.New(unlistable{inner}, nil), "command", "view", "path", "/memories/d")
	if want := "Error: Unsupported file type for /memories/d"; r.Text != want {
		t.Errorf("view of a directory whose listing fails = %q, want %q", r.Text, want)
	}
}
