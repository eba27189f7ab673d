package filestore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
)

// A change whose directory fsync fails (EIO) is made and seen, but a
// crash may undo it: the store answers memtool.ErrOutcomeUnknown, the one
// error after which it may have changed something, and the model is told
// to look before trying again, never that nothing changed. A change that
// fails on its own still changes nothing and says so.
func TestFailedDirectoryFsyncIsOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "memories"), nil)
	var fail atomic.Bool
	filestore.SetHooks(s, filestore.Hooks{DirSyncErr: func() error {
		if fail.Load() {
			return syscall.EIO
		}
		return nil
	}})
	if err := s.WriteFile(ctx, "a.md", []byte("one"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"create", func() error { return s.WriteFile(ctx, "b.md", []byte("two"), memtool.CreateOnly) }},
		{"update", func() error {
			return s.Update(ctx, "a.md", 100, func(old []byte) ([]byte, error) { return append(old, '!'), nil })
		}},
		{"rename", func() error { return s.Rename(ctx, "b.md", "c.md") }},
		{"remove", func() error { return s.Remove(ctx, "c.md") }},
	} {
		if err := c.change(); !errors.Is(err, memtool.ErrOutcomeUnknown) {
			t.Errorf("%s with a failed fsync: %v, want an error wrapping ErrOutcomeUnknown", c.name, err)
		}
	}
	if data, err := s.ReadFile(ctx, "a.md", 100); err != nil || string(data) != "one!" {
		t.Errorf("a.md = %q, %v: the update was made, and is seen", data, err)
	}
	// A create onto a taken name fails on its own: nothing changed, and
	// it is not said to be unknown.
	if err := s.WriteFile(ctx, "a.md", []byte("x"), memtool.CreateOnly); !errors.Is(err, memtool.ErrExist) || errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("create onto a.md: %v, want ErrExist alone", err)
	}
	r := memtool.New(s, nil).Run(ctx, []byte(`{"command":"create","path":"/memories/d.md","file_text":"x"}`))
	if !r.IsError || !strings.Contains(r.Text, "may or may not have been made") {
		t.Errorf("the model was told %q", r.Text)
	}
}

// A RemoveAll whose directory fsync fails after the directory went to the
// trash is unsure, and the trash, not durably moved, is not emptied then:
// the lock file keeps the writer's mark, so the next Open sweeps it, and
// the parent, empty for every reader, can be removed.
func TestRemoveAllFailedFsyncLeavesNothingForGood(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memories")
	s := open(t, dir, nil)
	must.Succeed(t, s.Mkdir(ctx, "p"))
	must.Succeed(t, s.Mkdir(ctx, "p/big"))
	must.Succeed(t, s.WriteFile(ctx, "p/big/a.md", []byte("deleted"), memtool.CreateOnly))
	var fail atomic.Bool
	filestore.SetHooks(s, filestore.Hooks{DirSyncErr: func() error {
		if fail.Load() {
			return syscall.EIO
		}
		return nil
	}})
	fail.Store(true)
	if err := s.RemoveAll(ctx, "p/big"); !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Fatalf("RemoveAll with a failed fsync: %v, want an error wrapping ErrOutcomeUnknown", err)
	}
	fail.Store(false)
	must.Succeed(t, s.Close())

	s = open(t, dir, nil)
	if got := debrisIn(t, dir); len(got) > 0 {
		t.Errorf("the next Open left the removed directory's rest on disk: %q", got)
	}
	if err := s.Remove(ctx, "p"); err != nil {
		t.Errorf("Remove of p, empty for every reader: %v", err)
	}
}
