package resource_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// TestRenameIntoMissingDirectory: a rename to a path whose directory is
// not there is not_found (404) naming that directory, not the file to
// move, which is there and stays; with the directory made, it moves.
func TestRenameIntoMissingDirectory(t *testing.T) {
	for name, s := range memAndFileStores(t) {
		t.Run(name, func(t *testing.T) {
			srv := serveStore(t, s, true, nil)
			if err := s.WriteFile(t.Context(), "a.md", []byte("kept"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			e := wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/a.md","to":"/memories/x/y/b.md"}`)), http.StatusNotFound, "not_found")
			if e != nil && (strings.Contains(e.Message, "a.md") || !strings.Contains(e.Message, "/memories/x/y")) {
				t.Errorf("the 404 says %q; want it to name /memories/x/y, not the file to move", e.Message)
			}
			if got := storetest.ReadText(t, s, "a.md"); got != "kept" {
				t.Errorf("a.md holds %q", got)
			}
			wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/none.md","to":"/memories/b.md"}`)), http.StatusNotFound, "not_found")
			wantStatus(t, mustDo(t, srv, "POST", "/v1/dir"+p("/memories/x/y", "parents", "true"), nil, nil), http.StatusCreated)
			wantStatus(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/a.md","to":"/memories/x/y/b.md"}`)), http.StatusNoContent)
			if got := storetest.ReadText(t, s, "x/y/b.md"); got != "kept" {
				t.Errorf("x/y/b.md holds %q", got)
			}
		})
	}
}

// TestRenameNamesTheNewDirectoryOnlyWhenMissing: a directory move on a
// store without rename (a copy) that fails because a file in the tree
// went meanwhile (another process deleted it) is not_found naming the
// tree moved, never the new path's directory, which is there: a client
// told that it is missing would make it, and try again in vain.
func TestRenameNamesTheNewDirectoryOnlyWhenMissing(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	for _, name := range []string{"d", "to"} {
		if err := inner.Mkdir(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"d/a.md", "d/b.md"} {
		if err := inner.WriteFile(ctx, name, []byte("kept"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	srv := serveStore(t, deletedMeanwhile{struct{ memtool.Store }{inner}, "d/b.md"}, true, nil)
	e := wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/d","to":"/memories/to/d"}`)), http.StatusNotFound, "not_found")
	if e != nil && !strings.HasSuffix(e.Message, ": /memories/d") {
		t.Errorf("the 404 says %q; want it to name /memories/d, not /memories/to, which is there", e.Message)
	}
	if got := storetest.ReadText(t, inner, "d/a.md"); got != "kept" {
		t.Errorf("d/a.md holds %q", got)
	}
}

// deletedMeanwhile is a store without rename on which another process
// deletes the file gone just before it is looked at.
type deletedMeanwhile struct {
	memtool.Store
	gone string
}

func (s deletedMeanwhile) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if name == s.gone {
		if err := s.Store.Remove(ctx, name); err != nil && !errors.Is(err, memtool.ErrNotExist) {
			return memtool.FileInfo{}, err
		}
	}
	return s.Store.Stat(ctx, name)
}

// TestRenameMissingOntoAFile: a rename of a path where nothing is, to a
// path under a file, is not_found naming the path to move, on every
// store: the file store's rename, which meets the file on the way to the
// new path first, answered not_dir, saying that the missing path is not
// a directory.
func TestRenameMissingOntoAFile(t *testing.T) {
	for name, s := range memAndFileStores(t) {
		t.Run(name, func(t *testing.T) {
			srv := serveStore(t, s, true, nil)
			if err := s.WriteFile(t.Context(), "f.md", []byte("a file"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			e := wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/none.md","to":"/memories/f.md/b.md"}`)), http.StatusNotFound, "not_found")
			if e != nil && !strings.HasSuffix(e.Message, ": /memories/none.md") {
				t.Errorf("the 404 says %q; want it to name /memories/none.md", e.Message)
			}
		})
	}
}

// memAndFileStores are a new memstore and a new directory store, by name.
func memAndFileStores(t *testing.T) map[string]memtool.Store {
	t.Helper()
	fsStore, err := filestore.Open(filepath.Join(t.TempDir(), "m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsStore.Close() })
	return map[string]memtool.Store{"memstore": memstore.New(), "filestore": fsStore}
}
