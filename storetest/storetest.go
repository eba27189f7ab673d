package storetest

import (
	"testing"

	"github.com/memtool/memtool"
)

// noLimit is a read limit no test file reaches.
const noLimit = 1 << 30

// A subtest checks one sentence (or a few close ones) of the contract on a
// new, empty store.
type subtest struct {
	name string
	fn   func(t *testing.T, s memtool.Store)
}

// The suite, in the order of the contract in store.go.
var groups = []struct {
	name  string
	tests []subtest
}{
	{"Stat", []subtest{
		{"Root", testStatRoot},
		{"File", testStatFile},
		{"Dir", testStatDir},
		{"Missing", testStatMissing},
		{"UnderFile", testStatUnderFile},
		{"Names", testStatNames},
	}},
	{"ReadFile", []subtest{
		{"Content", testReadFileContent},
		{"Missing", testReadFileMissing},
		{"Dir", testReadFileDir},
		{"Limit", testReadFileLimit},
	}},
	{"ReadDir", []subtest{
		{"Entries", testReadDirEntries},
		{"EmptyRoot", testReadDirEmptyRoot},
		{"File", testReadDirFile},
		{"Missing", testReadDirMissing},
	}},
	{"WriteFile", []subtest{
		{"CreateOnly", testWriteCreateOnly},
		{"CreateOnlyExisting", testWriteCreateOnlyExisting},
		{"Replace", testWriteReplace},
		{"ReplaceDir", testWriteReplaceDir},
		{"Root", testWriteRoot},
		{"MissingParent", testWriteMissingParent},
		{"ParentIsFile", testWriteParentIsFile},
	}},
	{"Update", []subtest{
		{"Replaces", testUpdateReplaces},
		{"FnError", testUpdateFnError},
		{"FnPanic", testUpdateFnPanic},
		{"Missing", testUpdateMissing},
		{"Dir", testUpdateDir},
		{"Limit", testUpdateLimit},
		{"ConcurrentAppends", testUpdateConcurrentAppends},
	}},
	{"Mkdir", []subtest{
		{"Creates", testMkdirCreates},
		{"Existing", testMkdirExisting},
		{"MissingParent", testMkdirMissingParent},
		{"ParentIsFile", testMkdirParentIsFile},
	}},
	{"Remove", []subtest{
		{"File", testRemoveFile},
		{"EmptyDir", testRemoveEmptyDir},
		{"NotEmpty", testRemoveNotEmpty},
		{"Missing", testRemoveMissing},
	}},
	{"Rename", []subtest{
		{"File", testRenameFile},
		{"Dir", testRenameDir},
		{"ExistingDestination", testRenameExistingDestination},
		{"MissingSource", testRenameMissingSource},
		{"MissingDestinationParent", testRenameMissingDestinationParent},
		{"ConcurrentOneWinner", testRenameConcurrentOneWinner},
		{"PrefixNeighbours", testRenamePrefixNeighbours},
		{"PatternNeighbours", testRenamePatternNeighbours},
	}},
	{"RemoveAll", []subtest{
		{"Tree", testRemoveAllTree},
		{"Missing", testRemoveAllMissing},
		{"PrefixNeighbours", testRemoveAllPrefixNeighbours},
		{"PatternNeighbours", testRemoveAllPatternNeighbours},
	}},
	{"Concurrency", []subtest{
		{"CreateOnlyOneWinner", testCreateOnlyOneWinner},
		{"MkdirOneWinner", testMkdirOneWinner},
		{"ReadersSeeWholeContent", testReadersSeeWholeContent},
	}},
	{"Cancel", []subtest{
		{"AlreadyCancelled", testAlreadyCancelled},
	}},
}

// Run runs the conformance suite. newStore is called for every subtest and
// must return a new, empty store.
func Run(t *testing.T, newStore func(t *testing.T) memtool.Store) {
	t.Helper()
	run(t, newStore, nil)
}

// run is Run, calling after (if not nil) at the end of each subtest that
// did not stop early.
func run(t *testing.T, newStore func(t *testing.T) memtool.Store, after func(t *testing.T)) {
	t.Helper()
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					s := newStore(t)
					if s == nil {
						t.Fatal("newStore returned nil")
					}
					st.fn(t, s)
					if after != nil {
						after(t)
					}
				})
			}
		})
	}
}
