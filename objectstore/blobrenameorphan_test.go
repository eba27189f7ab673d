//go:build gcs || azure

package objectstore_test

import (
	"sync/atomic"
	"testing"
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
