package memtool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// failingRemove is a store without optional capabilities whose Remove of
// one name fails with ErrBusy, as a store whose lock another process
// holds would.
type failingRemove struct {
	memtool.Store
	name string
}

func (f failingRemove) Remove(ctx context.Context, name string) error {
	if name == f.name {
		return memtool.ErrBusy
	}
	return f.Store.Remove(ctx, name)
}

// TestTreeHelpersSayWhenDoneInPart: a fallback that fails after it has
// changed part of the store says so (ErrOutcomeUnknown, with the store's
// error), and Memory does not tell the model that nothing was changed; one
// that fails before changing anything returns the store's error alone.
func TestTreeHelpersSayWhenDoneInPart(t *testing.T) {
	ctx := context.Background()
	seed := func(t *testing.T) *memstore.Store {
		s := memstore.New()
		for _, d := range []string{"d", "d/sub"} {
			if err := s.Mkdir(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"d/a", "d/sub/b"} {
			if err := s.WriteFile(ctx, f, []byte(f), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	for _, c := range []struct {
		name, fail string
		run        func(s memtool.Store) error
		command    string
		partial    bool
	}{
		{"RemoveAll, the directory after its files", "d", func(s memtool.Store) error { return memtool.RemoveAll(ctx, s, "d") },
			`{"command":"delete","path":"/memories/d"}`, true},
		{"RemoveAll, the first entry", "d/sub/b", func(s memtool.Store) error { return memtool.RemoveAll(ctx, s, "d/sub/b") },
			`{"command":"delete","path":"/memories/d/sub/b"}`, false},
		{"Move, a source after the copy", "d/sub", func(s memtool.Store) error { return memtool.Move(ctx, s, "d", "m", 1<<20) },
			`{"command":"rename","old_path":"/memories/d","new_path":"/memories/m"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := failingRemove{storetest.Bare(seed(t)), c.fail}
			err := c.run(s)
			if !errors.Is(err, memtool.ErrBusy) {
				t.Errorf("error %v, want the store's ErrBusy in it", err)
			}
			if got := errors.Is(err, memtool.ErrOutcomeUnknown); got != c.partial {
				t.Errorf("error %v: matches ErrOutcomeUnknown %v, want %v", err, got, c.partial)
			}
			r := memtool.New(failingRemove{storetest.Bare(seed(t)), c.fail}, nil).Run(ctx, []byte(c.command))
			if !r.IsError || strings.Contains(r.Text, "changed nothing") == c.partial || strings.Contains(r.Text, "done only in part") != c.partial {
				t.Errorf("the model reads %q", r.Text)
			}
		})
	}
}
