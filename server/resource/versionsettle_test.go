package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/server/resource"
)

// trashCut fails the renames out of history's trash while cut is set: a
// delete then stops where a process killed after moving the file into
// the trash stops, before its version is numbered.
type trashCut struct {
	memtool.Store
	cut *atomic.Bool
}

func (s trashCut) Rename(ctx context.Context, oldname, newname string) error {
	if s.cut.Load() && strings.HasPrefix(oldname, history.DirName+"/trash/") {
		return errors.New("killed")
	}
	return memtool.ForwardRename(ctx, s.Store, oldname, newname)
}

// TestVersionsListCutOffDelete: the versions of a file whose delete was
// cut off part way are listed, and can be reverted to, as soon as the
// server is asked for them: it finishes the delete first.
func TestVersionsListCutOffDelete(t *testing.T) {
	var cut atomic.Bool
	srv := serveStore(t, history.New(trashCut{backendtest.FileStore(t), &cut}, nil), true, nil)
	const path = "/memories/notes.md"
	wantStatus(t, put(t, srv, path, "kept words", http.Header{"If-None-Match": {"*"}}), http.StatusCreated)
	cut.Store(true)
	wantStatus(t, mustDo(t, srv, "DELETE", "/v1/entry"+p(path), nil, nil), http.StatusNoContent)
	cut.Store(false)

	var vs resource.Versions
	json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", "/v1/versions"+p(path), nil, nil), http.StatusOK), &vs)
	if len(vs.Versions) != 1 || vs.Versions[0].Op != "delete" {
		t.Fatalf("versions after a delete cut off part way: %+v, want the delete's", vs)
	}
	n := strconv.Itoa(vs.Versions[0].N)
	wantStatus(t, mustDo(t, srv, "POST", "/v1/revert"+p(path, "n", n), nil, nil), http.StatusNoContent)
	if got := string(wantStatus(t, mustDo(t, srv, "GET", "/v1/file"+p(path), nil, nil), http.StatusOK)); got != "kept words" {
		t.Errorf("after revert to %s: %q", n, got)
	}
}
