package history_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
)

// lostAnswer is a real store (a file store here) whose next update or
// rename of the file a, once armed, is made but answered with an error: what a store answers when it
// cannot tell whether a change took effect, such as the file store after
// a rename whose directory fsync failed, or a database whose commit
// acknowledgement the network lost.
type lostAnswer struct {
	memtool.Store
	armed atomic.Bool
}

var errLostAnswer = errors.New("the answer to the change was lost")

func (s *lostAnswer) lose(name string, err error) error {
	if err == nil && name == "a" && s.armed.CompareAndSwap(true, false) {
		return errLostAnswer
	}
	return err
}

func (s *lostAnswer) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return s.lose(name, s.Store.Update(ctx, name, limit, fn))
}

func (s *lostAnswer) Rename(ctx context.Context, oldname, newname string) error {
	return s.lose(oldname, memtool.ForwardRename(ctx, s.Store, oldname, newname))
}

// TestLostAnswerKeepsVersion: a change the inner store made but reported
// failed still has its version: an edit, an overwrite, and a delete with
// and without the inner store's rename. Before, the version was dropped
// as for a change that did not happen, and the content it replaced was
// lost (for a delete, the file was gone and nothing was kept).
func TestLostAnswerKeepsVersion(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		rename bool
		change func(s memtool.Store) error
		want   string // what the file holds after the change; "" gone
	}{
		{"edit", true, func(s memtool.Store) error {
			return s.Update(ctx, "a", 1<<20, func([]byte) ([]byte, error) { return []byte("new"), nil })
		}, "new"},
		{"overwrite", true, func(s memtool.Store) error { return s.WriteFile(ctx, "a", []byte("new"), memtool.Replace) }, "new"},
		{"delete", true, func(s memtool.Store) error { return s.Remove(ctx, "a") }, ""},
		{"delete without rename", false, func(s memtool.Store) error { return s.Remove(ctx, "a") }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &lostAnswer{Store: openFileStore(t, filepath.Join(t.TempDir(), "memories"))}
			var under memtool.Store = inner
			if !c.rename {
				under = struct{ memtool.Store }{inner}
			}
			s := history.New(under, nil)
			if err := s.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			inner.armed.Store(true)
			err := c.change(s)
			if inner.armed.Load() {
				t.Fatal("the change made no change through the inner store")
			}
			got, rerr := s.ReadFile(ctx, "a", 1<<20)
			if c.want == "" && !errors.Is(rerr, memtool.ErrNotExist) || c.want != "" && string(got) != c.want {
				t.Fatalf("after the change (%v): the file holds %q, %v; want %q", err, got, rerr, c.want)
			}
			texts, _ := kept(t, under, "a")
			if !slices.Contains(texts, "old") {
				t.Errorf("the change returned %v and took effect, but the content it replaced was not kept: versions %q", err, texts)
			}
			if left, err := inner.ReadDir(ctx, history.DirName+"/trash"); len(left) != 0 {
				t.Errorf("left in the trash: %v, %v", left, err)
			}
		})
	}
}
