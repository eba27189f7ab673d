package objectstore_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// These tests put another process's request (another client and store of
// the same bucket) at an exact point of a rename's conversation with the
// S3 server, through the server's Before hook: the interleavings that
// lose data if a rename deletes or writes without a condition.

// interleaving runs act with another store of the bucket when a request
// with method to a key ending in suffix arrives: once, or every time if
// always is set. errs collects what act returned.
type interleaving struct {
	method, suffix string
	always         bool
	act            func(theirs memtool.Store) error

	theirs memtool.Store
	fired  atomic.Int32
	mu     sync.Mutex
	errs   []error
}

func (il *interleaving) before(r *http.Request) {
	if r.Method != il.method || !strings.HasSuffix(r.URL.Path, il.suffix) {
		return
	}
	if il.always || il.fired.Load() == 0 {
		il.fired.Add(1)
		err := il.act(il.theirs)
		il.mu.Lock()
		il.errs = append(il.errs, err)
		il.mu.Unlock()
	}
}

// err returns what act returned, joined; it fails t if act never ran.
func (il *interleaving) err(t *testing.T) error {
	t.Helper()
	if il.fired.Load() == 0 {
		t.Fatalf("no %s request to …%s came", il.method, il.suffix)
	}
	il.mu.Lock()
	defer il.mu.Unlock()
	return errors.Join(il.errs...)
}

// raceStore returns a store of a new bucket on a server that runs il
// (with another store of the bucket, its own client) before every
// request.
func raceStore(t *testing.T, il *interleaving) *objectstore.Store {
	t.Helper()
	srv := startS3With(t, &s3test.Options{Before: il.before})
	name := srv.newBucket(t)
	il.theirs = srv.open(t, name, nil)
	return srv.open(t, name, nil)
}

func write(t *testing.T, s memtool.Store, name, text string) {
	t.Helper()
	if err := s.WriteFile(context.Background(), name, []byte(text), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, s memtool.Store, name string) {
	t.Helper()
	if err := s.Mkdir(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// content returns the file's text, or "(missing)".
func content(t *testing.T, s memtool.Store, name string) string {
	t.Helper()
	data, err := s.ReadFile(context.Background(), name, 1<<20)
	if errors.Is(err, memtool.ErrNotExist) {
		return "(missing)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// checkContents wants each name in want to hold its text in s, or to be
// missing where want says "(missing)".
func checkContents(t *testing.T, s memtool.Store, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got := content(t, s, name); got != w {
			t.Errorf("%s holds %q, want %q", name, got, w)
		}
	}
}

// renameDuring makes files (name: text, in at most one directory level)
// in a store whose server runs il, renames from to to, and returns the
// store and what Rename returned.
func renameDuring(t *testing.T, il *interleaving, from, to string, files map[string]string) (*objectstore.Store, error) {
	t.Helper()
	mine := raceStore(t, il)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if dir := path.Dir(name); dir != "." {
			if _, err := mine.Stat(context.Background(), dir); err != nil {
				mkdir(t, mine, dir)
			}
		}
		write(t, mine, name, files[name])
	}
	return mine, mine.Rename(context.Background(), from, to)
}

// v1 is the one file the file rename tests rename.
var v1 = map[string]string{"old.txt": "v1"}

func appendText(s memtool.Store, name, text string) error {
	return s.Update(context.Background(), name, 1<<20, func(old []byte) ([]byte, error) {
		return append(old, text...), nil
	})
}

// checkEditable wants each of the files names editable after a rename:
// appending to it succeeds.
func checkEditable(t *testing.T, s memtool.Store, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := appendText(s, name, "+"); err != nil {
			t.Errorf("editing %s after the rename: %v", name, err)
		}
	}
}

// An edit acknowledged between the rename's copy and its delete of the
// source is in the renamed file.
func TestS3RenameKeepsEditMadeWhileCopying(t *testing.T) {
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old.txt", act: func(theirs memtool.Store) error {
		return appendText(theirs, "old.txt", " edited")
	}}
	mine, err := renameDuring(t, il, "old.txt", "new.txt", v1)
	if err != nil {
		t.Fatal(err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the edit: %v", err)
	}
	if got := content(t, mine, "new.txt"); got != "v1 edited" {
		t.Errorf("new.txt holds %q, want the acknowledged edit %q", got, "v1 edited")
	}
	if got := content(t, mine, "old.txt"); got != "(missing)" {
		t.Errorf("old.txt still holds %q", got)
	}
}

// A source that is edited before every delete is left as it is, with
// every edit, and the rename fails with ErrBusy, leaving no copy.
func TestS3RenameGivesUpOnFileThatKeepsChanging(t *testing.T) {
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old.txt", always: true, act: func(theirs memtool.Store) error {
		return appendText(theirs, "old.txt", "+")
	}}
	mine, err := renameDuring(t, il, "old.txt", "new.txt", v1)
	if !errors.Is(err, memtool.ErrBusy) {
		t.Fatalf("Rename: %v, want ErrBusy", err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the edits: %v", err)
	}
	n := int(il.fired.Load())
	if got, want := content(t, mine, "old.txt"), "v1"+strings.Repeat("+", n); got != want {
		t.Errorf("old.txt holds %q, want all %d edits: %q", got, n, want)
	}
	if got := content(t, mine, "new.txt"); got != "(missing)" {
		t.Errorf("new.txt holds %q after a failed rename", got)
	}
}

// The copy is not changed while its source is there: an edit or a
// rename of the new name in the middle of a rename is refused with
// ErrBusy, and changes nothing.
func TestS3RenameCopyRefusesChangesUntilDone(t *testing.T) {
	var editErr, renameErr error
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old.txt", act: func(theirs memtool.Store) error {
		editErr = appendText(theirs, "new.txt", " edited")
		renameErr = theirs.(memtool.Renamer).Rename(context.Background(), "new.txt", "other.txt")
		return nil
	}}
	mine, err := renameDuring(t, il, "old.txt", "new.txt", v1)
	if err != nil {
		t.Fatal(err)
	}
	if err := il.err(t); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(editErr, memtool.ErrBusy) || !errors.Is(renameErr, memtool.ErrBusy) {
		t.Errorf("editing the copy during the rename: %v; renaming it: %v; want ErrBusy for both", editErr, renameErr)
	}
	checkContents(t, mine, map[string]string{"old.txt": "(missing)", "new.txt": "v1", "other.txt": "(missing)"})
	if err := appendText(il.theirs, "new.txt", " edited"); err != nil {
		t.Errorf("editing new.txt after the rename: %v", err)
	}
}

// If the source is edited and the copy replaced while the rename runs,
// both stay, with their content, and the rename says so.
func TestS3RenameKeepsBothWhenBothChange(t *testing.T) {
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old.txt", act: func(theirs memtool.Store) error {
		return errors.Join(appendText(theirs, "old.txt", " edited"), theirs.WriteFile(context.Background(), "new.txt", []byte("replaced"), memtool.Replace))
	}}
	mine, err := renameDuring(t, il, "old.txt", "new.txt", v1)
	if err := il.err(t); err != nil {
		t.Fatalf("the writes: %v", err)
	}
	var ref memtool.Refusal
	if !errors.As(err, &ref) || !strings.Contains(string(ref), "both are kept") {
		t.Fatalf("Rename: %v, want a refusal saying both are kept", err)
	}
	if got := content(t, mine, "old.txt"); got != "v1 edited" {
		t.Errorf("old.txt holds %q", got)
	}
	if got := content(t, mine, "new.txt"); got != "replaced" {
		t.Errorf("new.txt holds %q", got)
	}
}

// A copy left by a rename interrupted after it deleted the source is the
// file: the first edit, or rename, of it commits it and goes on.
func TestS3ChangeCommitsCopyOfInterruptedRename(t *testing.T) {
	ctx := context.Background()
	srv := startS3(t)
	name := srv.newBucket(t)
	s := srv.open(t, name, nil)
	write(t, s, "seed.txt", "") // the store's first use
	for _, key := range []string{"f/edited.txt", "f/renamed.txt"} {
		_, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{
			Bucket:   aws.String(name),
			Key:      aws.String(key),
			Body:     strings.NewReader("v1"),
			Metadata: map[string]string{"memtool-moving-from": "f%2Fgone.txt"},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := appendText(s, "edited.txt", " edited"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(ctx, "renamed.txt", "moved.txt"); err != nil {
		t.Fatal(err)
	}
	if err := appendText(s, "moved.txt", " edited"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"edited.txt": "v1 edited", "renamed.txt": "(missing)", "moved.txt": "v1 edited"} {
		if got := content(t, s, name); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	out, err := srv.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(name), Key: aws.String("f/edited.txt")})
	if err != nil || out.Metadata["memtool-moving-from"] != "-" {
		t.Errorf("edited.txt after the edit has metadata %v, %v; want the rename committed", out.Metadata, err)
	}
}

// A file created in a directory while it is being renamed (after the
// rename listed it) moves with it, and no file is left without its
// directory.
func TestS3DirRenameMovesFileCreatedMeanwhile(t *testing.T) {
	ctx := context.Background()
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old/a.txt", act: func(theirs memtool.Store) error {
		return theirs.WriteFile(ctx, "old/late.txt", []byte("late"), memtool.CreateOnly)
	}}
	mine, err := renameDuring(t, il, "old", "new", map[string]string{"old/a.txt": "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the create: %v", err)
	}
	if got := content(t, mine, "new/late.txt"); got != "late" {
		t.Errorf("new/late.txt holds %q, want the acknowledged create", got)
	}
	if got := content(t, mine, "new/a.txt"); got != "a" {
		t.Errorf("new/a.txt holds %q", got)
	}
	if _, err := mine.Stat(ctx, "old"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("old after the rename: %v, want ErrNotExist", err)
	}
	if entries, err := mine.ReadDir(ctx, ""); err != nil || len(entries) != 1 || entries[0].Name != "new" {
		t.Errorf("the root lists %v, %v; want just new", entries, err)
	}
}

// A file created in the destination directory while a rename copies into
// it is never overwritten: the rename fails with ErrExist and takes back
// only what it wrote, and the source stays whole.
func TestS3DirRenameNeverOverwritesCreateInDestination(t *testing.T) {
	ctx := context.Background()
	il := &interleaving{method: http.MethodPut, suffix: "/f/new/b.txt", act: func(theirs memtool.Store) error {
		return theirs.WriteFile(ctx, "new/b.txt", []byte("theirs"), memtool.CreateOnly)
	}}
	mine, err := renameDuring(t, il, "old", "new", map[string]string{"old/a.txt": "a", "old/b.txt": "mine"})
	if err := il.err(t); err != nil {
		t.Fatalf("the create: %v", err)
	}
	if !errors.Is(err, memtool.ErrExist) {
		t.Fatalf("Rename: %v, want ErrExist", err)
	}
	if got := content(t, mine, "new/b.txt"); got != "theirs" {
		t.Errorf("new/b.txt holds %q, want the acknowledged create", got)
	}
	if got := content(t, mine, "new/a.txt"); got != "(missing)" {
		t.Errorf("new/a.txt holds %q after the failed rename", got)
	}
	checkContents(t, mine, map[string]string{"old/a.txt": "a", "old/b.txt": "mine"})
	if fi, err := mine.Stat(ctx, "new"); err != nil || !fi.IsDir() {
		t.Errorf("new is %v, %v; want the directory holding the create", fi, err)
	}
}

// A directory rename whose file keeps changing moves the others, leaves
// that one (with every edit) in the old directory, and names it.
func TestS3DirRenameLeavesFileThatKeepsChanging(t *testing.T) {
	ctx := context.Background()
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old/a.txt", always: true, act: func(theirs memtool.Store) error {
		return appendText(theirs, "old/a.txt", "+")
	}}
	mine, err := renameDuring(t, il, "old", "new", map[string]string{"old/a.txt": "a", "old/b.txt": "b"})
	var ref memtool.Refusal
	if !errors.As(err, &ref) || !strings.Contains(string(ref), "/memories/old/a.txt") {
		t.Fatalf("Rename: %v, want a refusal naming /memories/old/a.txt", err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the edits: %v", err)
	}
	n := int(il.fired.Load())
	checkContents(t, mine, map[string]string{"old/a.txt": "a" + strings.Repeat("+", n), "new/b.txt": "b", "new/a.txt": "(missing)", "old/b.txt": "(missing)"})
	if fi, err := mine.Stat(ctx, "old"); err != nil || !fi.IsDir() {
		t.Errorf("old is %v, %v; want the directory holding a.txt", fi, err)
	}
}

// A file created in the source while a directory rename runs, whose name
// another process takes in the destination meanwhile, stays in the source
// (made a directory again), and the rename names it.
func TestS3DirRenameLeavesCreateItCannotMove(t *testing.T) {
	ctx := context.Background()
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old/a.txt", act: func(theirs memtool.Store) error {
		return errors.Join(
			theirs.WriteFile(ctx, "old/late.txt", []byte("late in old"), memtool.CreateOnly),
			theirs.WriteFile(ctx, "new/late.txt", []byte("late in new"), memtool.CreateOnly))
	}}
	mine, err := renameDuring(t, il, "old", "new", map[string]string{"old/a.txt": "a"})
	var ref memtool.Refusal
	if !errors.As(err, &ref) || !strings.Contains(string(ref), "/memories/old/late.txt") {
		t.Fatalf("Rename: %v, want a refusal naming /memories/old/late.txt", err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the creates: %v", err)
	}
	checkContents(t, mine, map[string]string{"old/late.txt": "late in old", "new/late.txt": "late in new", "new/a.txt": "a", "old/a.txt": "(missing)"})
	if fi, err := mine.Stat(ctx, "old"); err != nil || !fi.IsDir() {
		t.Errorf("old is %v, %v; want the directory holding late.txt", fi, err)
	}
}

// A create whose directory is renamed away between its check of the
// directory and its write takes its file back and fails with ErrNotExist:
// nothing is left where there is no directory.
func TestS3CreateIntoDirectoryRenamedAwayIsUndone(t *testing.T) {
	ctx := context.Background()
	mine, il, err := writeDuringDirRename(t, memtool.CreateOnly)
	if !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the create: %v, want ErrNotExist", err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the rename: %v", err)
	}
	checkContents(t, mine, map[string]string{"old/late.txt": "(missing)", "new/late.txt": "(missing)", "new/a.txt": "a"})
	if entries, err := mine.ReadDir(ctx, ""); err != nil || len(entries) != 1 || entries[0].Name != "new" {
		t.Errorf("the root lists %v, %v; want just new", entries, err)
	}
}

// On a service that ignores If-Match on DELETE, a rename is refused with
// a text for the model, and changes nothing.
func TestS3RenameRefusedWithoutDeleteConditions(t *testing.T) {
	ctx := context.Background()
	srv := startS3With(t, &s3test.Options{IgnoreDeleteConditions: true})
	s := srv.open(t, srv.newBucket(t), nil)
	write(t, s, "a.txt", "a")
	mkdir(t, s, "d")
	for _, names := range [][2]string{{"a.txt", "b.txt"}, {"d", "e"}} {
		err := s.Rename(ctx, names[0], names[1])
		var ref memtool.Refusal
		if !errors.As(err, &ref) || !strings.Contains(string(ref), "If-Match") {
			t.Errorf("Rename(%s): %v, want a refusal naming the missing condition", names[0], err)
		}
	}
	entries, err := s.ReadDir(ctx, "")
	if err != nil || len(entries) != 2 || entries[0].Name != "a.txt" || entries[1].Name != "d" {
		t.Errorf("the root lists %v, %v; want a.txt and d, unchanged", entries, err)
	}
}

// writeDuringDirRename writes old/late.txt with mode to a store whose
// directory old (holding a.txt) another process renames to new just as
// the write's PUT is sent; it returns the store, the interleaving (whose
// err is the rename's) and the write's error.
func writeDuringDirRename(t *testing.T, mode memtool.WriteMode) (memtool.Store, *interleaving, error) {
	ctx := context.Background()
	il := &interleaving{method: http.MethodPut, suffix: "/f/old/late.txt", act: func(theirs memtool.Store) error {
		return theirs.(memtool.Renamer).Rename(ctx, "old", "new")
	}}
	mine := raceStore(t, il)
	mkdir(t, mine, "old")
	write(t, mine, "old/a.txt", "a")
	return mine, il, mine.WriteFile(ctx, "old/late.txt", []byte("late"), mode)
}
