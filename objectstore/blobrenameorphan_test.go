//go:build gcs || azure

package objectstore_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool/objectstore/s3test"
)

// A directory rename on a gocloud bucket whose copy of a file may still be
// made (its context ended while the write was out) keeps the
// destination's marker: the copy, landing later, is never left without
// its directory.
func TestGocloudDirRenameCopyOutcomeUnknown(t *testing.T) {
	h := newHeldPut(t, "/f/new/b.txt")
	checkNoOrphan(t, gocloudStore(t, h.options()), h)
}

// A directory rename on a gocloud bucket whose copy is refused, and whose
// undo of the copies is refused too, does not answer an error that says
// nothing changed while the new directory is there.
func TestGocloudDirRenameUndoRefused(t *testing.T) {
	armed := new(atomic.Bool)
	checkUndoRefused(t, gocloudStore(t, refuseCopyAndUndo(armed)), armed)
}

// A RemoveAll on a gocloud bucket whose delete of a file the service
// answers "not found" while the file is still there, and whose reads of
// that file answer "not found" too (gocloud's GCS driver reads a 403, as
// a permission denied on that object gives, as NotFound), does not answer
// success with the file left behind without its directory, hidden until a
// directory of that name is made again.
func TestGocloudRemoveAllUnreadableFile(t *testing.T) {
	ctx := context.Background()
	var armed atomic.Bool
	s := gocloudStore(t, &s3test.Options{Fail: func(r *http.Request) string {
		if armed.Load() && r.Method != http.MethodPut && strings.HasSuffix(r.URL.Path, "/f/d/x.txt") {
			return "NoSuchKey"
		}
		return ""
	}})
	mkdir(t, s, "d")
	write(t, s, "d/x.txt", "v1")
	armed.Store(true)
	err := s.RemoveAll(ctx, "d")
	armed.Store(false)
	if err == nil && content(t, s, "d/x.txt") != "(missing)" {
		t.Errorf("RemoveAll worked, with d/x.txt still there")
	}
	if _, serr := s.Stat(ctx, "d"); err != nil && serr != nil {
		t.Errorf("RemoveAll = %v, and Stat(d) = %v with d/x.txt still there", err, serr)
	}
}
