package storetest

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// capability returns s as C, or skips the test if s does not have C
// (memtool.Has).
func capability[C any](t *testing.T, s memtool.Store) C {
	c, ok := s.(C)
	if !ok || !memtool.Has[C](s) {
		t.Skipf("%T does not have %v", s, reflect.TypeFor[C]())
	}
	return c
}

func renamer(t *testing.T, s memtool.Store) memtool.Renamer {
	return capability[memtool.Renamer](t, s)
}

// "Rename moves the file … at oldname to newname."
func testRenameFile(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	ctx := t.Context()
	mustWrite(t, s, "a", "content of a")
	mustMkdir(t, s, "d")
	mustMkdir(t, s, "e")
	// Listed before: a listing the store keeps must not outlive the move.
	checkEntries(t, s, "", []memtool.FileInfo{file("a", 12), dir("d"), dir("e")})
	wantNoErr(t, "Rename(a, b)", r.Rename(ctx, "a", "b"))
	checkMissing(t, s, "a")
	checkFile(t, s, "b", "content of a")
	wantNoErr(t, "Rename(b, d/b)", r.Rename(ctx, "b", "d/b"))
	wantNoErr(t, "Rename(d/b, e/c)", r.Rename(ctx, "d/b", "e/c"))
	checkFile(t, s, "e/c", "content of a")
	checkEntries(t, s, "", []memtool.FileInfo{dir("d"), dir("e")})
	checkEntries(t, s, "d", nil)
	checkEntries(t, s, "e", []memtool.FileInfo{file("c", 12)})
}

// "Rename moves the … directory at oldname to newname", with everything in it.
func testRenameDir(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	want := tree{}
	for name, v := range makeTree(t, s, tree{"d": "dir", "d/x": "file:x content", "d/e": "dir", "d/e/y": "file:y content", "d/e/empty": "dir", "other": "dir"}) {
		if rest, ok := strings.CutPrefix(name, "d"); ok {
			name = "other/moved" + rest
		}
		want[name] = v
	}
	wantNoErr(t, "Rename(d, other/moved)", r.Rename(t.Context(), "d", "other/moved"))
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after Rename(d, other/moved) the store holds\n  %v\nwant\n  %v", got, want)
	}
	checkGone(t, s, "d", "d/x", "d/e/y")
}

// checkGone checks that nothing is left of the directory d, which held the
// files of names, after it was moved or removed: the names are missing,
// and a directory made again at d is empty (a store that leaves entries
// behind, out of sight, must not bring them back).
func checkGone(t *testing.T, s memtool.Store, d string, names ...string) {
	t.Helper()
	for _, name := range names {
		checkMissing(t, s, name)
	}
	wantNoErr(t, "Mkdir("+d+") again", s.Mkdir(t.Context(), d))
	checkEntries(t, s, d, nil)
}

// "If anything is at newname it fails with ErrExist and changes nothing."
func testRenameExistingDestination(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	mustWrite(t, s, "f", "f")
	mustWrite(t, s, "g", "g")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustMkdir(t, s, "empty")
	mustMkdir(t, s, "empty2")
	before := snapshot(t, s)
	for _, c := range [][2]string{
		{"f", "g"}, {"f", "d"}, {"f", "empty"}, {"f", "d/x"},
		{"d", "f"}, {"d", "empty"}, {"empty", "empty2"}, {"empty", "d"},
		// Onto its own name: something (itself) is there.
		{"f", "f"}, {"d", "d"}, {"d/x", "d/x"}, {"empty", "empty"},
	} {
		err := r.Rename(t.Context(), c[0], c[1])
		WantErr(t, fmt.Sprintf("Rename(%q, %q)", c[0], c[1]), err, memtool.ErrExist)
	}
	unchanged(t, s, before, "Rename onto existing names")
}

// "Missing oldname: ErrNotExist."
func testRenameMissingSource(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, old := range []string{"nope", "d/nope", "nope/x"} {
		err := r.Rename(t.Context(), old, "new")
		WantErr(t, fmt.Sprintf("Rename(%q, new)", old), err, memtool.ErrNotExist)
	}
	wantErrUnderFile(t, `Rename("f/x", new)`, r.Rename(t.Context(), "f/x", "new"))
	unchanged(t, s, before, "Rename of missing names")
}

// "newname, whose parent must exist": the contract names no error class;
// it must fail and change nothing.
func testRenameMissingDestinationParent(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	mustWrite(t, s, "f", "x")
	mustWrite(t, s, "g", "y")
	before := snapshot(t, s)
	for _, dst := range []string{"nope/f", "g/f"} {
		if err := r.Rename(t.Context(), "f", dst); err == nil {
			t.Errorf("Rename(f, %q) succeeded, but the parent of %q is not a directory", dst, dst)
		}
	}
	unchanged(t, s, before, "Rename to a name without a parent directory")
}

// "the check and the move are one atomic step": of many renames onto one
// destination, exactly one wins.
func testRenameConcurrentOneWinner(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	n := goroutines()
	for i := range n {
		mustWrite(t, s, fmt.Sprintf("src%d", i), fmt.Sprintf("content %d", i))
	}
	errs := race(n, func(i int) error {
		return r.Rename(t.Context(), fmt.Sprintf("src%d", i), "dst")
	})
	winner := oneWinner(t, errs, func(i int) string { return fmt.Sprintf("Rename(src%d, dst)", i) })
	checkFile(t, s, "dst", fmt.Sprintf("content %d", winner))
	for i := range n {
		name := fmt.Sprintf("src%d", i)
		if i == winner {
			checkMissing(t, s, name)
		} else {
			checkFile(t, s, name, fmt.Sprintf("content %d", i))
		}
	}
}

func remover(t *testing.T, s memtool.Store) memtool.RemoveAller {
	return capability[memtool.RemoveAller](t, s)
}

// "removing a directory and everything in it in one call."
func testRemoveAllTree(t *testing.T, s memtool.Store) {
	r := remover(t, s)
	makeTree(t, s, tree{"d": "dir", "d/x": "file:x", "d/e": "dir", "d/e/y": "file:y", "d/e/empty": "dir",
		"keep": "dir", "keep/z": "file:z", "d2": "file:prefix sibling", "empty": "dir"})
	snapshot(t, s) // lists every directory: a listing the store keeps must not outlive the removal
	wantNoErr(t, "RemoveAll(d)", r.RemoveAll(t.Context(), "d"))
	wantNoErr(t, "RemoveAll(empty)", r.RemoveAll(t.Context(), "empty"))
	want := tree{"keep": "dir", "keep/z": "file:z", "d2": "file:prefix sibling"}
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after RemoveAll(d) and RemoveAll(empty) the store holds\n  %v\nwant\n  %v", got, want)
	}
	checkGone(t, s, "d", "d/x", "d/e/y", "d/e/empty")
}

// Names a store that finds a subtree by a key range or a pattern could
// take for part of the directory d beside them: prefixNeighbours share
// "a"'s prefix and sort next to it in byte order; patternNeighbours are
// what the wildcards of SQL's LIKE in "a_%" would match.
var (
	prefixNeighbours  = []string{"a.b", "a-c", "a0", "ab"}
	patternNeighbours = []string{"ab", "a_b", "a%x"}
)

// neighbours makes the directory d (with d/x and d/y/z) beside each of
// others (each with a file w) and an empty q, and returns what must be
// left of them, q included, whatever is done to d.
func neighbours(t *testing.T, s memtool.Store, d string, others []string) tree {
	want := tree{"q": "dir"}
	for _, dir := range []string{d, d + "/y", "q"} {
		mustMkdir(t, s, dir)
	}
	mustWrite(t, s, d+"/x", d+"/x")
	mustWrite(t, s, d+"/y/z", d+"/y/z")
	for _, o := range others {
		mustMkdir(t, s, o)
		mustWrite(t, s, o+"/w", o+"/w")
		want[o], want[o+"/w"] = "dir", "file:"+o+"/w"
	}
	return want
}

// Rename moves exactly the subtree of the directory d it names, beside
// others, whatever characters d's name holds.
func checkRenameNeighbours(t *testing.T, s memtool.Store, d string, others []string) {
	r := renamer(t, s)
	want := neighbours(t, s, d, others)
	wantNoErr(t, "Rename("+d+", q/"+d+")", r.Rename(t.Context(), d, "q/"+d))
	maps.Copy(want, tree{"q/" + d: "dir", "q/" + d + "/x": "file:" + d + "/x", "q/" + d + "/y": "dir", "q/" + d + "/y/z": "file:" + d + "/y/z"})
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after Rename(%s, q/%s) the store holds\n  %v\nwant\n  %v", d, d, got, want)
	}
}

// RemoveAll removes exactly the subtree of the directory d it names,
// beside others, whatever characters d's name holds.
func checkRemoveAllNeighbours(t *testing.T, s memtool.Store, d string, others []string) {
	r := remover(t, s)
	want := neighbours(t, s, d, others)
	wantNoErr(t, "RemoveAll("+d+")", r.RemoveAll(t.Context(), d))
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after RemoveAll(%s) the store holds\n  %v\nwant\n  %v", d, got, want)
	}
}

func testRenamePrefixNeighbours(t *testing.T, s memtool.Store) {
	checkRenameNeighbours(t, s, "a", prefixNeighbours)
}

func testRenamePatternNeighbours(t *testing.T, s memtool.Store) {
	checkRenameNeighbours(t, s, "a_%", patternNeighbours)
}

func testRemoveAllPrefixNeighbours(t *testing.T, s memtool.Store) {
	checkRemoveAllNeighbours(t, s, "a", prefixNeighbours)
}

func testRemoveAllPatternNeighbours(t *testing.T, s memtool.Store) {
	checkRemoveAllNeighbours(t, s, "a_%", patternNeighbours)
}

// "Missing: ErrNotExist."
func testRemoveAllMissing(t *testing.T, s memtool.Store) {
	checkRemoveMissing(t, s, "RemoveAll", remover(t, s).RemoveAll)
}
