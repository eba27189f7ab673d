package history_test

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strings"
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

// lostVersionAnswer is a real store (a file store) whose next write of a
// version, once armed, is made but answered with an error.
type lostVersionAnswer struct {
	memtool.Store
	armed atomic.Bool
}

func (s *lostVersionAnswer) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	err := s.Store.WriteFile(ctx, name, data, mode)
	base := path.Base(name)
	isVersion := strings.HasPrefix(name, history.DirName+"/") && base != "path" && base != "counter"
	if err == nil && isVersion && s.armed.CompareAndSwap(true, false) {
		return errLostAnswer
	}
	return err
}

// TestLostVersionAnswerKeepsNothing: a change whose version the inner
// store wrote but answered an error for fails having changed nothing, and
// so keeps nothing. Before, the version stayed: a version of a change
// that never happened, which counts against MaxVersions.
func TestLostVersionAnswerKeepsNothing(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		rename bool
		change func(s memtool.Store) error
	}{
		{"edit", true, func(s memtool.Store) error {
			return s.Update(ctx, "a", 1<<20, func([]byte) ([]byte, error) { return []byte("new"), nil })
		}},
		{"overwrite", true, func(s memtool.Store) error { return s.WriteFile(ctx, "a", []byte("new"), memtool.Replace) }},
		{"delete without rename", false, func(s memtool.Store) error { return s.Remove(ctx, "a") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &lostVersionAnswer{Store: openFileStore(t, filepath.Join(t.TempDir(), "memories"))}
			var under memtool.Store = inner
			if c.rename {
				under = renaming{inner}
			}
			s := history.New(under, nil)
			if err := s.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			inner.armed.Store(true)
			err := c.change(s)
			if inner.armed.Load() {
				t.Fatal("no version was written")
			}
			if err == nil {
				t.Fatal("the change succeeded")
			}
			if got, rerr := s.ReadFile(ctx, "a", 1<<20); string(got) != "old" {
				t.Fatalf("after the failed change (%v): the file holds %q, %v", err, got, rerr)
			}
			if texts, _ := kept(t, under, "a"); len(texts) != 0 {
				t.Errorf("the change failed (%v) and changed nothing, but kept versions %q", err, texts)
			}
		})
	}
}

// renaming gives a lostVersionAnswer its file store's rename.
type renaming struct{ *lostVersionAnswer }

func (s renaming) Rename(ctx context.Context, oldname, newname string) error {
	return memtool.ForwardRename(ctx, s.Store, oldname, newname)
}
