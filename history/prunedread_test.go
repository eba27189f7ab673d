package history_test

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
)

// prunedOnRead is a store in which another process drops each version
// between the moment a reader lists it and the moment it reads it.
type prunedOnRead struct{ memtool.Store }

func (s prunedOnRead) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if strings.HasPrefix(name, history.DirName+"/") && path.Base(name) != "counter" && path.Base(name) != "path" {
		s.Store.Remove(ctx, name)
	}
	return s.Store.ReadFile(ctx, name, limit)
}

// A version pruned after it was listed (by another process's change of
// the file, or memtool gc) is not found, as one pruned before:
// ErrNoVersion, rather than the store's error about a file under
// history's directory.
func TestReadOfVersionPrunedMeanwhile(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, nil)
		if err := s.WriteFile(ctx, "a.md", []byte("one"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteFile(ctx, "a.md", []byte("two"), memtool.Replace); err != nil {
			t.Fatal(err)
		}
		_, err := history.Read(ctx, prunedOnRead{inner}, "/memories/a.md", 1)
		if !errors.Is(err, history.ErrNoVersion) {
			t.Errorf("read of version 1, pruned meanwhile: %v; want ErrNoVersion", err)
		}
		err = history.Revert(ctx, s, prunedOnRead{inner}, "/memories/a.md", 1)
		if !errors.Is(err, history.ErrNoVersion) {
			t.Errorf("revert to version 1, pruned meanwhile: %v; want ErrNoVersion", err)
		}
	})
}
