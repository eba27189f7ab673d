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
	"github.com/memtool/memtool/storetest"
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

// A lostAnswerChange is a change of the file a, made through a history
// store over an inner store with its rename or without.
type lostAnswerChange struct {
	name   string
	rename bool
	change func(ctx context.Context, s memtool.Store) error
}

// The changes the lost-answer tests make.
var (
	editA = lostAnswerChange{"edit", true, func(ctx context.Context, s memtool.Store) error {
		return s.Update(ctx, "a", 1<<20, func([]byte) ([]byte, error) { return []byte("new"), nil })
	}}
	overwriteA = lostAnswerChange{"overwrite", true, func(ctx context.Context, s memtool.Store) error {
		return s.WriteFile(ctx, "a", []byte("new"), memtool.Replace)
	}}
	deleteA              = lostAnswerChange{"delete", true, removeA}
	deleteAWithoutRename = lostAnswerChange{"delete without rename", false, removeA}
)

func removeA(ctx context.Context, s memtool.Store) error { return s.Remove(ctx, "a") }

// changeLosingAnswer makes c through a history store over inner (hiding
// inner's rename unless c.rename), once the file a holds "old" and armed
// is set: inner then loses the answer to its next change. It returns the
// history store, the store under it, and what the change returned.
func changeLosingAnswer(t *testing.T, inner memtool.Store, armed *atomic.Bool, c lostAnswerChange) (s, under memtool.Store, err error) {
	t.Helper()
	ctx := context.Background()
	under = inner
	if !c.rename {
		under = storetest.Bare(inner)
	}
	s = history.New(under, nil)
	if err := s.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	return s, under, c.change(ctx, s)
}

// TestLostAnswerKeepsVersion: a change the inner store made but reported
// failed still has its version: an edit, an overwrite, and a delete with
// and without the inner store's rename. Before, the version was dropped
// as for a change that did not happen, and the content it replaced was
// lost (for a delete, the file was gone and nothing was kept).
func TestLostAnswerKeepsVersion(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		lostAnswerChange
		want string // what the file holds after the change; "" gone
	}{
		{editA, "new"},
		{overwriteA, "new"},
		{deleteA, ""},
		{deleteAWithoutRename, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &lostAnswer{Store: openFileStore(t, filepath.Join(t.TempDir(), "memories"))}
			s, under, err := changeLosingAnswer(t, inner, &inner.armed, c.lostAnswerChange)
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

func (s *lostVersionAnswer) Rename(ctx context.Context, oldname, newname string) error {
	return memtool.ForwardRename(ctx, s.Store, oldname, newname)
}

// TestLostVersionAnswerKeepsNothing: a change whose version the inner
// store wrote but answered an error for fails having changed nothing, and
// so keeps nothing. Before, the version stayed: a version of a change
// that never happened, which counts against MaxVersions.
func TestLostVersionAnswerKeepsNothing(t *testing.T) {
	ctx := context.Background()
	for _, c := range []lostAnswerChange{editA, overwriteA, deleteAWithoutRename} {
		t.Run(c.name, func(t *testing.T) {
			inner := &lostVersionAnswer{Store: openFileStore(t, filepath.Join(t.TempDir(), "memories"))}
			s, under, err := changeLosingAnswer(t, inner, &inner.armed, c)
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
