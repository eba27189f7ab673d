package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
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
		{"MissingParent", testWriteMissingParent},
		{"ParentIsFile", testWriteParentIsFile},
	}},
	{"Update", []subtest{
		{"Replaces", testUpdateReplaces},
		{"FnError", testUpdateFnError},
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
	}},
	{"RemoveAll", []subtest{
		{"Tree", testRemoveAllTree},
		{"Missing", testRemoveAllMissing},
		{"PrefixNeighbours", testRemoveAllPrefixNeighbours},
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
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					s := newStore(t)
					if s == nil {
						t.Fatal("newStore returned nil")
					}
					st.fn(t, s)
				})
			}
		})
	}
}

// ---- helpers ----

// goroutines is how many goroutines the concurrency checks start at once.
func goroutines() int {
	if testing.Short() {
		return 8
	}
	return 16
}

func mustWrite(t *testing.T, s memtool.Store, name, data string) {
	t.Helper()
	if err := s.WriteFile(t.Context(), name, []byte(data), memtool.CreateOnly); err != nil {
		t.Fatalf("setup: WriteFile(%q, CreateOnly): %v", name, err)
	}
}

func mustMkdir(t *testing.T, s memtool.Store, name string) {
	t.Helper()
	if err := s.Mkdir(t.Context(), name); err != nil {
		t.Fatalf("setup: Mkdir(%q): %v", name, err)
	}
}

// wantErr reports unless errors.Is(err, target).
func wantErr(t *testing.T, call string, err, target error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s succeeded, want an error matching %v", call, target)
	case !errors.Is(err, target):
		t.Errorf("%s = %v, want an error matching %v (errors.Is)", call, err, target)
	}
}

// wantErrUnderFile is wantErr for a name whose parent is a file, where the
// contract of Remove, Rename and RemoveAll allows either class: the name is
// missing (ErrNotExist), and a directory was needed as its parent (ErrNotDir).
func wantErrUnderFile(t *testing.T, call string, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s succeeded, want an error matching %v or %v", call, memtool.ErrNotExist, memtool.ErrNotDir)
	case !errors.Is(err, memtool.ErrNotExist) && !errors.Is(err, memtool.ErrNotDir):
		t.Errorf("%s = %v, want an error matching %v or %v (errors.Is)", call, err, memtool.ErrNotExist, memtool.ErrNotDir)
	}
}

func wantNoErr(t *testing.T, call string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", call, err)
	}
}

// checkFile checks that name is a regular file holding want, through both
// ReadFile and Stat.
func checkFile(t *testing.T, s memtool.Store, name, want string) {
	t.Helper()
	got, err := s.ReadFile(t.Context(), name, noLimit)
	if err != nil {
		t.Errorf("ReadFile(%q): %v", name, err)
		return
	}
	if string(got) != want {
		t.Errorf("ReadFile(%q) = %q, want %q", name, got, want)
	}
	fi, err := s.Stat(t.Context(), name)
	switch {
	case err != nil:
		t.Errorf("Stat(%q): %v", name, err)
	case !fi.IsRegular() || fi.Size != int64(len(want)):
		t.Errorf("Stat(%q) = %+v, want a regular file of %d bytes", name, fi, len(want))
	}
}

func checkDir(t *testing.T, s memtool.Store, name string) {
	t.Helper()
	fi, err := s.Stat(t.Context(), name)
	switch {
	case err != nil:
		t.Errorf("Stat(%q): %v", name, err)
	case !fi.IsDir():
		t.Errorf("Stat(%q) = %+v, want a directory", name, fi)
	}
}

func checkMissing(t *testing.T, s memtool.Store, name string) {
	t.Helper()
	fi, err := s.Stat(t.Context(), name)
	if err == nil {
		t.Errorf("Stat(%q) = %+v, want ErrNotExist", name, fi)
	} else if !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Stat(%q) = %v, want ErrNotExist", name, err)
	}
}

// A tree is everything in a store: name → "dir" or "file:" + content.
type tree map[string]string

// snapshot reads the whole store through its own methods.
func snapshot(t *testing.T, s memtool.Store) tree {
	t.Helper()
	out := tree{}
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := s.ReadDir(t.Context(), dir)
		if err != nil {
			t.Fatalf("snapshot: ReadDir(%q): %v", dir, err)
		}
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			switch {
			case e.IsDir():
				out[name] = "dir"
				walk(name)
			case e.IsRegular():
				data, err := s.ReadFile(t.Context(), name, noLimit)
				if err != nil {
					t.Fatalf("snapshot: ReadFile(%q): %v", name, err)
				}
				out[name] = "file:" + string(data)
			default:
				out[name] = fmt.Sprintf("irregular %v", e.Type)
			}
		}
	}
	walk("")
	return out
}

// unchanged reports how the store differs from before, after a call that
// failed and so must have changed nothing.
func unchanged(t *testing.T, s memtool.Store, before tree, call string) {
	t.Helper()
	after := snapshot(t, s)
	if maps.Equal(before, after) {
		return
	}
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if a, ok := after[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s: removed (was %.40q)", name, before[name]))
		} else if a != before[name] {
			diffs = append(diffs, fmt.Sprintf("  %s: %.40q, was %.40q", name, a, before[name]))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s: added (%.40q)", name, after[name]))
		}
	}
	t.Errorf("after %s, which failed, the store changed:\n%s", call, strings.Join(diffs, "\n"))
}

// checkEntries compares ReadDir(dir) with want (name → FileInfo), in any order.
func checkEntries(t *testing.T, s memtool.Store, dir string, want []memtool.FileInfo) {
	t.Helper()
	got, err := s.ReadDir(t.Context(), dir)
	if err != nil {
		t.Errorf("ReadDir(%q): %v", dir, err)
		return
	}
	byName := func(a, b memtool.FileInfo) int { return strings.Compare(a.Name, b.Name) }
	got = slices.Clone(got)
	slices.SortFunc(got, byName)
	want = slices.Clone(want)
	slices.SortFunc(want, byName)
	if !slices.Equal(got, want) {
		t.Errorf("ReadDir(%q) =\n  %+v\nwant\n  %+v", dir, got, want)
	}
}

func file(name string, size int) memtool.FileInfo {
	return memtool.FileInfo{Name: name, Size: int64(size)}
}

func dir(name string) memtool.FileInfo {
	return memtool.FileInfo{Name: name, Type: fs.ModeDir}
}

// race runs fn(i) for i in [0, n) in n goroutines released at once, and
// returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// ---- Stat ----

// "The root always exists."
func testStatRoot(t *testing.T, s memtool.Store) {
	fi, err := s.Stat(t.Context(), "")
	if err != nil {
		t.Fatalf("Stat(\"\") of a new store: %v", err)
	}
	if !fi.IsDir() || fi.Name != "" || fi.Size != 0 {
		t.Errorf("Stat(\"\") = %+v, want a directory named \"\" of size 0", fi)
	}
}

func testStatFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "12345")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/g", "abc")
	mustWrite(t, s, "empty", "")
	for name, want := range map[string]memtool.FileInfo{
		"f":     file("f", 5),
		"d/g":   file("g", 3),
		"empty": file("empty", 0),
	} {
		fi, err := s.Stat(t.Context(), name)
		if err != nil {
			t.Errorf("Stat(%q): %v", name, err)
		} else if fi != want {
			t.Errorf("Stat(%q) = %+v, want %+v", name, fi, want)
		}
	}
}

func testStatDir(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustMkdir(t, s, "d/e")
	mustWrite(t, s, "d/e/f", "content")
	for name, want := range map[string]memtool.FileInfo{"d": dir("d"), "d/e": dir("e")} {
		fi, err := s.Stat(t.Context(), name)
		if err != nil {
			t.Errorf("Stat(%q): %v", name, err)
		} else if fi != want {
			t.Errorf("Stat(%q) = %+v, want %+v (a directory has size 0)", name, fi, want)
		}
	}
}

// "Missing …: ErrNotExist."
func testStatMissing(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	for _, name := range []string{"nope", "nope/x", "d/nope", "d/nope/x"} {
		checkMissing(t, s, name)
	}
}

// "(or a parent that is a file): ErrNotExist."
func testStatUnderFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/g", "x")
	for _, name := range []string{"f/x", "f/x/y", "d/g/x"} {
		checkMissing(t, s, name)
	}
}

// Names are any clean names CleanPath accepts: spaces, non-ASCII, leading dots.
func testStatNames(t *testing.T, s memtool.Store) {
	names := []string{"with space", "ünï cödé 日本.txt", ".hidden", "a.b.c", "😀", "~tilde", "-dash", "#hash"}
	var want []memtool.FileInfo
	for i, name := range names {
		mustWrite(t, s, name, strings.Repeat("x", i))
		want = append(want, file(name, i))
	}
	mustMkdir(t, s, "dir with space")
	mustWrite(t, s, "dir with space/é", "é")
	want = append(want, dir("dir with space"))
	for i, name := range names {
		checkFile(t, s, name, strings.Repeat("x", i))
	}
	checkFile(t, s, "dir with space/é", "é")
	checkEntries(t, s, "", want)
}

// ---- ReadFile ----

// "ReadFile returns the whole content of the regular file at name."
func testReadFileContent(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	contents := map[string]string{
		"empty":  "",
		"text":   "hello\nworld\n",
		"binary": "\x00\xff\xfe\r\n\x89PNG\x00",
		"d/big":  strings.Repeat("0123456789abcdef", 64<<10/16+1),
	}
	for name, data := range contents {
		mustWrite(t, s, name, data)
	}
	for name, data := range contents {
		checkFile(t, s, name, data)
	}
}

// "Missing: ErrNotExist."
func testReadFileMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	for _, name := range []string{"nope", "d/nope", "nope/x", "f/x"} {
		data, err := s.ReadFile(t.Context(), name, noLimit)
		wantErr(t, fmt.Sprintf("ReadFile(%q)", name), err, memtool.ErrNotExist)
		if data != nil {
			t.Errorf("ReadFile(%q) returned %q with its error", name, data)
		}
	}
}

// "a directory: ErrIsDir."
func testReadFileDir(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/f", "x")
	for _, name := range []string{"d", ""} {
		_, err := s.ReadFile(t.Context(), name, noLimit)
		wantErr(t, fmt.Sprintf("ReadFile(%q)", name), err, memtool.ErrIsDir)
	}
}

// "A file larger than limit bytes is not read: ErrTooLarge."
func testReadFileLimit(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "ten", "0123456789")
	mustWrite(t, s, "empty", "")
	for _, limit := range []int64{10, 11} {
		data, err := s.ReadFile(t.Context(), "ten", limit)
		if err != nil || string(data) != "0123456789" {
			t.Errorf("ReadFile(ten, limit %d) = %q, %v; want the whole file", limit, data, err)
		}
	}
	for _, limit := range []int64{9, 1, 0} {
		data, err := s.ReadFile(t.Context(), "ten", limit)
		wantErr(t, fmt.Sprintf("ReadFile(ten, limit %d)", limit), err, memtool.ErrTooLarge)
		if data != nil {
			t.Errorf("ReadFile(ten, limit %d) returned %q with its error", limit, data)
		}
	}
	if data, err := s.ReadFile(t.Context(), "empty", 0); err != nil || len(data) != 0 {
		t.Errorf("ReadFile(empty, limit 0) = %q, %v; want an empty file", data, err)
	}
}

// ---- ReadDir ----

// "ReadDir returns the entries of the directory at name, in any order, each
// with its Name, Size and Type."
func testReadDirEntries(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "a", "abc")
	mustWrite(t, s, "b", "")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "1234567")
	mustMkdir(t, s, "d/e")
	mustWrite(t, s, "d/e/deep", "z")
	checkEntries(t, s, "", []memtool.FileInfo{file("a", 3), file("b", 0), dir("d")})
	checkEntries(t, s, "d", []memtool.FileInfo{file("x", 7), dir("e")})
	checkEntries(t, s, "d/e", []memtool.FileInfo{file("deep", 1)})
	mustMkdir(t, s, "empty")
	checkEntries(t, s, "empty", nil)
}

// "Entries the store keeps for itself are never returned": a new store's
// root is empty, and after writes it holds exactly what was written.
func testReadDirEmptyRoot(t *testing.T, s memtool.Store) {
	checkEntries(t, s, "", nil)
	mustWrite(t, s, "f", "x")
	if err := s.WriteFile(t.Context(), "f", []byte("yy"), memtool.Replace); err != nil {
		t.Fatalf("WriteFile(f, Replace): %v", err)
	}
	if err := s.Update(t.Context(), "f", noLimit, func(old []byte) ([]byte, error) { return append(old, 'z'), nil }); err != nil {
		t.Fatalf("Update(f): %v", err)
	}
	mustMkdir(t, s, "d")
	mustMkdir(t, s, "d/gone")
	if err := s.Remove(t.Context(), "d/gone"); err != nil {
		t.Fatalf("Remove(d/gone): %v", err)
	}
	checkEntries(t, s, "", []memtool.FileInfo{file("f", 3), dir("d")})
	checkEntries(t, s, "d", nil)
}

// "a file: ErrNotDir."
func testReadDirFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	_, err := s.ReadDir(t.Context(), "f")
	wantErr(t, `ReadDir("f")`, err, memtool.ErrNotDir)
}

// "Missing: ErrNotExist."
func testReadDirMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	for _, name := range []string{"nope", "d/nope", "f/x"} {
		entries, err := s.ReadDir(t.Context(), name)
		wantErr(t, fmt.Sprintf("ReadDir(%q)", name), err, memtool.ErrNotExist)
		if entries != nil {
			t.Errorf("ReadDir(%q) returned %+v with its error", name, entries)
		}
	}
}

// ---- WriteFile ----

func testWriteCreateOnly(t *testing.T, s memtool.Store) {
	ctx := t.Context()
	wantNoErr(t, "WriteFile(f, CreateOnly)", s.WriteFile(ctx, "f", []byte("hello"), memtool.CreateOnly))
	checkFile(t, s, "f", "hello")
	mustMkdir(t, s, "d")
	wantNoErr(t, "WriteFile(d/g, CreateOnly)", s.WriteFile(ctx, "d/g", []byte("nested"), memtool.CreateOnly))
	checkFile(t, s, "d/g", "nested")
	wantNoErr(t, "WriteFile(empty, CreateOnly)", s.WriteFile(ctx, "empty", nil, memtool.CreateOnly))
	checkFile(t, s, "empty", "")
	// The store keeps its own copy of data.
	data := []byte("original")
	wantNoErr(t, "WriteFile(copy, CreateOnly)", s.WriteFile(ctx, "copy", data, memtool.CreateOnly))
	copy(data, "XXXXXXXX")
	checkFile(t, s, "copy", "original")
}

// "With CreateOnly it fails with ErrExist if anything is at name."
func testWriteCreateOnlyExisting(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "old")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustMkdir(t, s, "empty")
	before := snapshot(t, s)
	for _, name := range []string{"f", "d", "empty", "d/x"} {
		err := s.WriteFile(t.Context(), name, []byte("new"), memtool.CreateOnly)
		wantErr(t, fmt.Sprintf("WriteFile(%q, CreateOnly)", name), err, memtool.ErrExist)
	}
	unchanged(t, s, before, "WriteFile(CreateOnly) onto existing names")
}

// "with Replace it … replaces a regular file, or creates it if nothing is there."
func testWriteReplace(t *testing.T, s memtool.Store) {
	ctx := t.Context()
	mustWrite(t, s, "f", strings.Repeat("long old content ", 100))
	wantNoErr(t, "WriteFile(f, Replace)", s.WriteFile(ctx, "f", []byte("new"), memtool.Replace))
	checkFile(t, s, "f", "new")
	wantNoErr(t, "WriteFile(f, Replace) again", s.WriteFile(ctx, "f", []byte("newer, longer"), memtool.Replace))
	checkFile(t, s, "f", "newer, longer")
	wantNoErr(t, "WriteFile(g, Replace) of a missing file", s.WriteFile(ctx, "g", []byte("created"), memtool.Replace))
	checkFile(t, s, "g", "created")
	checkEntries(t, s, "", []memtool.FileInfo{file("f", 13), file("g", 7)})
}

// "with Replace it fails with ErrIsDir … if something other than a regular
// file is there."
func testWriteReplaceDir(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustMkdir(t, s, "full")
	mustWrite(t, s, "full/x", "x")
	before := snapshot(t, s)
	for _, name := range []string{"d", "full"} {
		err := s.WriteFile(t.Context(), name, []byte("new"), memtool.Replace)
		wantErr(t, fmt.Sprintf("WriteFile(%q, Replace)", name), err, memtool.ErrIsDir)
	}
	unchanged(t, s, before, "WriteFile(Replace) onto directories")
}

// "whose parent directory must exist (else ErrNotExist …)"
func testWriteMissingParent(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace} {
		for _, name := range []string{"nope/f", "d/nope/f", "nope/deeper/f"} {
			err := s.WriteFile(t.Context(), name, []byte("x"), mode)
			wantErr(t, fmt.Sprintf("WriteFile(%q, %s)", name, modeName(mode)), err, memtool.ErrNotExist)
		}
	}
	unchanged(t, s, before, "WriteFile under missing directories")
}

// "(… or ErrNotDir if it is a file)"; a parent under a file is itself
// missing: ErrNotExist.
func testWriteParentIsFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "file")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/g", "file")
	before := snapshot(t, s)
	for _, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace} {
		for _, name := range []string{"f/x", "d/g/x"} {
			err := s.WriteFile(t.Context(), name, []byte("x"), mode)
			wantErr(t, fmt.Sprintf("WriteFile(%q, %s)", name, modeName(mode)), err, memtool.ErrNotDir)
		}
		err := s.WriteFile(t.Context(), "f/x/y", []byte("x"), mode)
		wantErr(t, fmt.Sprintf("WriteFile(\"f/x/y\", %s)", modeName(mode)), err, memtool.ErrNotExist)
	}
	unchanged(t, s, before, "WriteFile under a file")
}

func modeName(m memtool.WriteMode) string {
	switch m {
	case memtool.CreateOnly:
		return "CreateOnly"
	case memtool.Replace:
		return "Replace"
	}
	return fmt.Sprintf("WriteMode(%d)", m)
}

// ---- Update ----

// "Update atomically replaces the content of the existing regular file at
// name with fn(old)."
func testUpdateReplaces(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/f", "line 1\nline 2")
	var seen []string
	err := s.Update(t.Context(), "d/f", noLimit, func(old []byte) ([]byte, error) {
		seen = append(seen, string(old))
		return bytes.ReplaceAll(old, []byte("line"), []byte("LINE")), nil
	})
	wantNoErr(t, "Update(d/f)", err)
	if len(seen) == 0 {
		t.Errorf("Update(d/f) never called fn")
	}
	for _, old := range seen {
		if old != "line 1\nline 2" {
			t.Errorf("Update(d/f) called fn with %q, want the old content", old)
		}
	}
	checkFile(t, s, "d/f", "LINE 1\nLINE 2")
	// Shrinking to nothing leaves an empty file.
	wantNoErr(t, "Update(d/f) to empty", s.Update(t.Context(), "d/f", noLimit, func([]byte) ([]byte, error) { return nil, nil }))
	checkFile(t, s, "d/f", "")
	checkEntries(t, s, "d", []memtool.FileInfo{file("f", 0)})
}

// "If fn returns an error, nothing changes and Update returns that error
// unchanged."
func testUpdateFnError(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "keep me")
	before := snapshot(t, s)
	sentinel := errors.New("storetest: refused by fn")
	for _, partial := range []bool{false, true} {
		err := s.Update(t.Context(), "f", noLimit, func(old []byte) ([]byte, error) {
			if partial {
				return []byte("half-made result"), sentinel
			}
			return nil, sentinel
		})
		if err != sentinel {
			t.Errorf("Update with fn failing (fn also returned data: %v) = %v, want fn's error itself (%v)", partial, err, sentinel)
		}
	}
	unchanged(t, s, before, "Update whose fn failed")
}

// "Errors for name are those of ReadFile": missing.
func testUpdateMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, name := range []string{"nope", "d/nope", "nope/x", "f/x"} {
		err := s.Update(t.Context(), name, noLimit, func([]byte) ([]byte, error) { return []byte("created?"), nil })
		wantErr(t, fmt.Sprintf("Update(%q)", name), err, memtool.ErrNotExist)
	}
	unchanged(t, s, before, "Update of missing files")
}

// "Errors for name are those of ReadFile": a directory.
func testUpdateDir(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/f", "x")
	before := snapshot(t, s)
	for _, name := range []string{"d", ""} {
		err := s.Update(t.Context(), name, noLimit, func([]byte) ([]byte, error) { return []byte("replaced?"), nil })
		wantErr(t, fmt.Sprintf("Update(%q)", name), err, memtool.ErrIsDir)
	}
	unchanged(t, s, before, "Update of directories")
}

// "Errors for name are those of ReadFile": the limit.
func testUpdateLimit(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "ten", "0123456789")
	before := snapshot(t, s)
	err := s.Update(t.Context(), "ten", 9, func([]byte) ([]byte, error) { return []byte("short"), nil })
	wantErr(t, "Update(ten, limit 9)", err, memtool.ErrTooLarge)
	unchanged(t, s, before, "Update over the limit")
	err = s.Update(t.Context(), "ten", 10, func(old []byte) ([]byte, error) { return append(old, "!"...), nil })
	wantNoErr(t, "Update(ten, limit 10)", err)
	checkFile(t, s, "ten", "0123456789!")
}

// "two writers never lose each other's update": goroutines each append
// their own lines with Update; every line is there at the end.
func testUpdateConcurrentAppends(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "log", "")
	n, rounds := goroutines(), 4
	errs := race(n, func(i int) error {
		for r := range rounds {
			line := fmt.Sprintf("goroutine %d round %d\n", i, r)
			err := s.Update(t.Context(), "log", noLimit, func(old []byte) ([]byte, error) {
				return append(old, line...), nil
			})
			if err != nil {
				return fmt.Errorf("Update(log) for %q: %w", line, err)
			}
		}
		return nil
	})
	for _, err := range errs {
		wantNoErr(t, "concurrent Update", err)
	}
	data, err := s.ReadFile(t.Context(), "log", noLimit)
	if err != nil {
		t.Fatalf("ReadFile(log): %v", err)
	}
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		count[line]++
	}
	for i := range n {
		for r := range rounds {
			line := fmt.Sprintf("goroutine %d round %d", i, r)
			if count[line] != 1 {
				t.Errorf("line %q is there %d times, want once", line, count[line])
			}
			delete(count, line)
		}
	}
	for line := range count {
		t.Errorf("unexpected line %q", line)
	}
}

// ---- Mkdir ----

func testMkdirCreates(t *testing.T, s memtool.Store) {
	wantNoErr(t, "Mkdir(d)", s.Mkdir(t.Context(), "d"))
	wantNoErr(t, "Mkdir(d/e)", s.Mkdir(t.Context(), "d/e"))
	checkDir(t, s, "d")
	checkDir(t, s, "d/e")
	checkEntries(t, s, "", []memtool.FileInfo{dir("d")})
	checkEntries(t, s, "d", []memtool.FileInfo{dir("e")})
	checkEntries(t, s, "d/e", nil)
}

// "Anything at name: ErrExist." The root is always there.
func testMkdirExisting(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustWrite(t, s, "f", "file")
	before := snapshot(t, s)
	for _, name := range []string{"d", "f", "d/x", ""} {
		wantErr(t, fmt.Sprintf("Mkdir(%q)", name), s.Mkdir(t.Context(), name), memtool.ErrExist)
	}
	unchanged(t, s, before, "Mkdir of existing names")
}

// "whose parent must exist (else ErrNotExist …)"
func testMkdirMissingParent(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, name := range []string{"nope/e", "d/nope/e"} {
		wantErr(t, fmt.Sprintf("Mkdir(%q)", name), s.Mkdir(t.Context(), name), memtool.ErrNotExist)
	}
	unchanged(t, s, before, "Mkdir under missing directories")
}

// "(… or ErrNotDir if it is a file)"
func testMkdirParentIsFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "file")
	before := snapshot(t, s)
	wantErr(t, `Mkdir("f/e")`, s.Mkdir(t.Context(), "f/e"), memtool.ErrNotDir)
	wantErr(t, `Mkdir("f/e/g")`, s.Mkdir(t.Context(), "f/e/g"), memtool.ErrNotExist)
	unchanged(t, s, before, "Mkdir under a file")
}

// ---- Remove ----

func testRemoveFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustWrite(t, s, "sibling", "y")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/g", "z")
	wantNoErr(t, "Remove(f)", s.Remove(t.Context(), "f"))
	wantNoErr(t, "Remove(d/g)", s.Remove(t.Context(), "d/g"))
	checkMissing(t, s, "f")
	checkMissing(t, s, "d/g")
	checkFile(t, s, "sibling", "y")
	checkEntries(t, s, "", []memtool.FileInfo{file("sibling", 1), dir("d")})
	checkEntries(t, s, "d", nil)
}

func testRemoveEmptyDir(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustMkdir(t, s, "d/e")
	wantNoErr(t, "Remove(d/e)", s.Remove(t.Context(), "d/e"))
	checkMissing(t, s, "d/e")
	checkDir(t, s, "d")
	wantNoErr(t, "Remove(d)", s.Remove(t.Context(), "d"))
	checkMissing(t, s, "d")
	checkEntries(t, s, "", nil)
}

// "a directory with entries: ErrNotEmpty."
func testRemoveNotEmpty(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustMkdir(t, s, "e")
	mustMkdir(t, s, "e/sub")
	before := snapshot(t, s)
	for _, name := range []string{"d", "e"} {
		wantErr(t, fmt.Sprintf("Remove(%q)", name), s.Remove(t.Context(), name), memtool.ErrNotEmpty)
	}
	unchanged(t, s, before, "Remove of non-empty directories")
}

// "Missing: ErrNotExist."
func testRemoveMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, name := range []string{"nope", "d/nope", "nope/x"} {
		wantErr(t, fmt.Sprintf("Remove(%q)", name), s.Remove(t.Context(), name), memtool.ErrNotExist)
	}
	wantErrUnderFile(t, `Remove("f/x")`, s.Remove(t.Context(), "f/x"))
	unchanged(t, s, before, "Remove of missing names")
}

// ---- Rename ----

func renamer(t *testing.T, s memtool.Store) memtool.Renamer {
	r, ok := s.(memtool.Renamer)
	if !ok {
		t.Skipf("%T does not implement memtool.Renamer", s)
	}
	return r
}

// "Rename moves the file … at oldname to newname."
func testRenameFile(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	ctx := t.Context()
	mustWrite(t, s, "a", "content of a")
	mustMkdir(t, s, "d")
	mustMkdir(t, s, "e")
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
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x content")
	mustMkdir(t, s, "d/e")
	mustWrite(t, s, "d/e/y", "y content")
	mustMkdir(t, s, "d/e/empty")
	mustMkdir(t, s, "other")
	want := tree{}
	for name, v := range snapshot(t, s) {
		if rest, ok := strings.CutPrefix(name, "d"); ok {
			name = "other/moved" + rest
		}
		want[name] = v
	}
	wantNoErr(t, "Rename(d, other/moved)", r.Rename(t.Context(), "d", "other/moved"))
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after Rename(d, other/moved) the store holds\n  %v\nwant\n  %v", got, want)
	}
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
	} {
		err := r.Rename(t.Context(), c[0], c[1])
		wantErr(t, fmt.Sprintf("Rename(%q, %q)", c[0], c[1]), err, memtool.ErrExist)
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
		wantErr(t, fmt.Sprintf("Rename(%q, new)", old), err, memtool.ErrNotExist)
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
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("Rename(src%d, dst) and Rename(src%d, dst) both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, memtool.ErrExist):
			t.Errorf("losing Rename(src%d, dst) = %v, want ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no Rename onto dst succeeded")
	}
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

// ---- RemoveAll ----

func remover(t *testing.T, s memtool.Store) memtool.RemoveAller {
	r, ok := s.(memtool.RemoveAller)
	if !ok {
		t.Skipf("%T does not implement memtool.RemoveAller", s)
	}
	return r
}

// "removing a directory and everything in it in one call."
func testRemoveAllTree(t *testing.T, s memtool.Store) {
	r := remover(t, s)
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustMkdir(t, s, "d/e")
	mustWrite(t, s, "d/e/y", "y")
	mustMkdir(t, s, "d/e/empty")
	mustMkdir(t, s, "keep")
	mustWrite(t, s, "keep/z", "z")
	mustWrite(t, s, "d2", "prefix sibling")
	mustMkdir(t, s, "empty")
	wantNoErr(t, "RemoveAll(d)", r.RemoveAll(t.Context(), "d"))
	wantNoErr(t, "RemoveAll(empty)", r.RemoveAll(t.Context(), "empty"))
	want := tree{"keep": "dir", "keep/z": "file:z", "d2": "file:prefix sibling"}
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after RemoveAll(d) and RemoveAll(empty) the store holds\n  %v\nwant\n  %v", got, want)
	}
}

// prefixNeighbours makes a directory "a" beside names that share its prefix
// and sort next to it in byte order ("a.b", "a-c", "a0", "ab"): a store that
// finds a subtree by a key range must leave them alone.
func prefixNeighbours(t *testing.T, s memtool.Store) tree {
	for _, d := range []string{"a", "a/y", "a.b", "a-c", "a0", "ab", "q"} {
		mustMkdir(t, s, d)
	}
	for _, f := range []string{"a/x", "a/y/z", "a.b/w", "a-c/w", "a0/w", "ab/w"} {
		mustWrite(t, s, f, f)
	}
	return tree{"a.b": "dir", "a.b/w": "file:a.b/w", "a-c": "dir", "a-c/w": "file:a-c/w",
		"a0": "dir", "a0/w": "file:a0/w", "ab": "dir", "ab/w": "file:ab/w", "q": "dir"}
}

// Rename moves exactly the subtree of the directory it names.
func testRenamePrefixNeighbours(t *testing.T, s memtool.Store) {
	r := renamer(t, s)
	want := prefixNeighbours(t, s)
	wantNoErr(t, "Rename(a, q/a)", r.Rename(t.Context(), "a", "q/a"))
	maps.Copy(want, tree{"q/a": "dir", "q/a/x": "file:a/x", "q/a/y": "dir", "q/a/y/z": "file:a/y/z"})
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after Rename(a, q/a) the store holds\n  %v\nwant\n  %v", got, want)
	}
}

// RemoveAll removes exactly the subtree of the directory it names.
func testRemoveAllPrefixNeighbours(t *testing.T, s memtool.Store) {
	r := remover(t, s)
	want := prefixNeighbours(t, s)
	wantNoErr(t, "RemoveAll(a)", r.RemoveAll(t.Context(), "a"))
	if got := snapshot(t, s); !maps.Equal(got, want) {
		t.Errorf("after RemoveAll(a) the store holds\n  %v\nwant\n  %v", got, want)
	}
}

// "Missing: ErrNotExist."
func testRemoveAllMissing(t *testing.T, s memtool.Store) {
	r := remover(t, s)
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, name := range []string{"nope", "d/nope", "nope/x"} {
		wantErr(t, fmt.Sprintf("RemoveAll(%q)", name), r.RemoveAll(t.Context(), name), memtool.ErrNotExist)
	}
	wantErrUnderFile(t, `RemoveAll("f/x")`, r.RemoveAll(t.Context(), "f/x"))
	unchanged(t, s, before, "RemoveAll of missing names")
}

// ---- Concurrency ----

// "The check and the write are one atomic step" (CreateOnly): of many
// creates of one name, exactly one wins.
func testCreateOnlyOneWinner(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	n := goroutines()
	errs := race(n, func(i int) error {
		return s.WriteFile(t.Context(), "d/x", []byte(fmt.Sprintf("writer %d", i)), memtool.CreateOnly)
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("WriteFile(d/x, CreateOnly) by writers %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, memtool.ErrExist):
			t.Errorf("losing WriteFile(d/x, CreateOnly) by writer %d = %v, want ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no WriteFile(d/x, CreateOnly) succeeded")
	}
	checkFile(t, s, "d/x", fmt.Sprintf("writer %d", winner))
}

// Mkdir is linearizable: of many Mkdirs of one name, exactly one wins.
func testMkdirOneWinner(t *testing.T, s memtool.Store) {
	n := goroutines()
	errs := race(n, func(int) error { return s.Mkdir(t.Context(), "d") })
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, memtool.ErrExist):
			t.Errorf("losing Mkdir(d) %d = %v, want ErrExist", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d concurrent Mkdir(d) succeeded, want exactly 1", wins, n)
	}
	checkDir(t, s, "d")
}

// "a reader sees a file's old or new content, never a mix."
func testReadersSeeWholeContent(t *testing.T, s memtool.Store) {
	versions := []string{strings.Repeat("a", 3000), strings.Repeat("b", 1000) + "\n", strings.Repeat("c", 5000)}
	mustWrite(t, s, "f", versions[0])
	writes := 60
	if testing.Short() {
		writes = 20
	}
	done := make(chan struct{})
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for reads := 0; ; reads++ {
				select {
				case <-done:
					if reads > 0 {
						return
					}
				default:
				}
				data, err := s.ReadFile(t.Context(), "f", noLimit)
				if err == nil && !slices.Contains(versions, string(data)) {
					err = fmt.Errorf("read %d bytes that are none of the written versions (%.20q…)", len(data), data)
				}
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
				}
			}
		})
	}
	for i := range writes {
		next := []byte(versions[(i+1)%len(versions)])
		var err error
		if i%2 == 0 {
			err = s.WriteFile(t.Context(), "f", next, memtool.Replace)
		} else {
			err = s.Update(t.Context(), "f", noLimit, func([]byte) ([]byte, error) { return next, nil })
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	close(done)
	wg.Wait()
	for i, msg := range bad {
		if i == 5 {
			t.Errorf("… and %d more", len(bad)-5)
			break
		}
		t.Errorf("a reader during writes: %s", msg)
	}
}

// ---- Cancellation ----

// "Every method … honours ctx cancellation", and "A method that returns an
// error has changed nothing": with a cancelled context every method fails
// with context.Canceled and the store is as it was.
func testAlreadyCancelled(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "old")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustMkdir(t, s, "empty")
	before := snapshot(t, s)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(call string, err error) {
		t.Helper()
		wantErr(t, call+" with a cancelled context", err, context.Canceled)
	}
	_, err := s.Stat(ctx, "f")
	check("Stat(f)", err)
	_, err = s.ReadFile(ctx, "f", noLimit)
	check("ReadFile(f)", err)
	_, err = s.ReadDir(ctx, "d")
	check("ReadDir(d)", err)
	check("WriteFile(new, CreateOnly)", s.WriteFile(ctx, "new", []byte("new"), memtool.CreateOnly))
	check("WriteFile(f, Replace)", s.WriteFile(ctx, "f", []byte("new"), memtool.Replace))
	check("Update(f)", s.Update(ctx, "f", noLimit, func([]byte) ([]byte, error) { return []byte("new"), nil }))
	check("Mkdir(newdir)", s.Mkdir(ctx, "newdir"))
	check("Remove(d/x)", s.Remove(ctx, "d/x"))
	check("Remove(empty)", s.Remove(ctx, "empty"))
	if r, ok := s.(memtool.Renamer); ok {
		check("Rename(f, moved)", r.Rename(ctx, "f", "moved"))
		check("Rename(d, moved)", r.Rename(ctx, "d", "moved"))
	}
	if r, ok := s.(memtool.RemoveAller); ok {
		check("RemoveAll(d)", r.RemoveAll(ctx, "d"))
	}
	unchanged(t, s, before, "calls with a cancelled context")
}
