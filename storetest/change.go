package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
)

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
	before := makeTree(t, s, someTree)
	for _, name := range []string{"f", "d", "empty", "d/x"} {
		err := s.WriteFile(t.Context(), name, []byte("new"), memtool.CreateOnly)
		WantErr(t, fmt.Sprintf("WriteFile(%q, CreateOnly)", name), err, memtool.ErrExist)
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
	// Of the same length: a store must not judge by the size that nothing changed.
	wantNoErr(t, "WriteFile(f, Replace) of as many bytes", s.WriteFile(ctx, "f", []byte("NEWER; LONGER"), memtool.Replace))
	checkFile(t, s, "f", "NEWER; LONGER")
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
	refuseEach(t, s, "WriteFile(Replace) onto directories", memtool.ErrIsDir, "WriteFile(%q, Replace)", func(ctx context.Context, name string) error {
		return s.WriteFile(ctx, name, []byte("new"), memtool.Replace)
	}, "d", "full")
}

// The root is a directory: a write of the name "" fails (ErrIsDir; with
// CreateOnly, ErrExist may say it too) and changes nothing.
func testWriteRoot(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	before := snapshot(t, s)
	err := s.WriteFile(t.Context(), "", []byte("new"), memtool.CreateOnly)
	if !errors.Is(err, memtool.ErrExist) && !errors.Is(err, memtool.ErrIsDir) {
		t.Errorf("WriteFile(\"\", CreateOnly) = %v, want ErrExist or ErrIsDir", err)
	}
	WantErr(t, `WriteFile("", Replace)`, s.WriteFile(t.Context(), "", []byte("new"), memtool.Replace), memtool.ErrIsDir)
	unchanged(t, s, before, "WriteFile of the root")
}

// "whose parent directory must exist (else ErrNotExist …)"
func testWriteMissingParent(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace} {
		for _, name := range []string{"nope/f", "d/nope/f", "nope/deeper/f"} {
			err := s.WriteFile(t.Context(), name, []byte("x"), mode)
			WantErr(t, fmt.Sprintf("WriteFile(%q, %s)", name, modeName(mode)), err, memtool.ErrNotExist)
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
			WantErr(t, fmt.Sprintf("WriteFile(%q, %s)", name, modeName(mode)), err, memtool.ErrNotDir)
		}
		err := s.WriteFile(t.Context(), "f/x/y", []byte("x"), mode)
		WantErr(t, fmt.Sprintf("WriteFile(\"f/x/y\", %s)", modeName(mode)), err, memtool.ErrNotExist)
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
	// The store keeps its own copy of fn's result.
	var result []byte
	wantNoErr(t, "Update(d/f) again", s.Update(t.Context(), "d/f", noLimit, func(old []byte) ([]byte, error) {
		result = append([]byte("new "), old...)
		return result, nil
	}))
	copy(result, "XXXX")
	checkFile(t, s, "d/f", "new LINE 1\nLINE 2")
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

// "If fn panics, nothing changes, the panic goes on, and the store stays
// usable": a caller that recovers it (an HTTP server recovers each
// request's) can write again.
func testUpdateFnPanic(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "keep me")
	before := snapshot(t, s)
	func() {
		defer func() {
			if p := recover(); p != "storetest: fn panics" {
				t.Errorf("Update whose fn panicked: recovered %v, want fn's panic", p)
			}
		}()
		s.Update(t.Context(), "f", noLimit, func([]byte) ([]byte, error) { panic("storetest: fn panics") })
	}()
	unchanged(t, s, before, "Update whose fn panicked")
	done := make(chan error, 1)
	go func() { done <- s.WriteFile(t.Context(), "g", []byte("after"), memtool.CreateOnly) }()
	select {
	case err := <-done:
		wantNoErr(t, "WriteFile after an Update whose fn panicked", err)
	case <-time.After(30 * time.Second):
		t.Fatal("WriteFile after an Update whose fn panicked has not returned in 30s: the store is still locked")
	}
}

// "Errors for name are those of ReadFile": missing.
func testUpdateMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	refuseEach(t, s, "Update of missing files", memtool.ErrNotExist, "Update(%q)", func(ctx context.Context, name string) error {
		return s.Update(ctx, name, noLimit, func([]byte) ([]byte, error) { return []byte("created?"), nil })
	}, "nope", "d/nope", "nope/x", "f/x")
}

// "Errors for name are those of ReadFile": a directory.
func testUpdateDir(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/f", "x")
	refuseEach(t, s, "Update of directories", memtool.ErrIsDir, "Update(%q)", func(ctx context.Context, name string) error {
		return s.Update(ctx, name, noLimit, func([]byte) ([]byte, error) { return []byte("replaced?"), nil })
	}, "d", "")
}

// "Errors for name are those of ReadFile": the limit.
func testUpdateLimit(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "ten", "0123456789")
	before := snapshot(t, s)
	err := s.Update(t.Context(), "ten", 9, func([]byte) ([]byte, error) { return []byte("short"), nil })
	WantErr(t, "Update(ten, limit 9)", err, memtool.ErrTooLarge)
	unchanged(t, s, before, "Update over the limit")
	err = s.Update(t.Context(), "ten", 10, func(old []byte) ([]byte, error) { return append(old, "!"...), nil })
	wantNoErr(t, "Update(ten, limit 10)", err)
	checkFile(t, s, "ten", "0123456789!")
	// The largest limit, no limit at all, gives fn the whole file.
	err = s.Update(t.Context(), "ten", math.MaxInt64, func(old []byte) ([]byte, error) { return append(old, "?"...), nil })
	wantNoErr(t, "Update(ten, limit MaxInt64)", err)
	checkFile(t, s, "ten", "0123456789!?")
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
	refuseEach(t, s, "Mkdir of existing names", memtool.ErrExist, "Mkdir(%q)", s.Mkdir, "d", "f", "d/x", "")
}

// "whose parent must exist (else ErrNotExist …)"
func testMkdirMissingParent(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	refuseEach(t, s, "Mkdir under missing directories", memtool.ErrNotExist, "Mkdir(%q)", s.Mkdir, "nope/e", "d/nope/e")
}

// "(… or ErrNotDir if it is a file)"
func testMkdirParentIsFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "file")
	before := snapshot(t, s)
	WantErr(t, `Mkdir("f/e")`, s.Mkdir(t.Context(), "f/e"), memtool.ErrNotDir)
	WantErr(t, `Mkdir("f/e/g")`, s.Mkdir(t.Context(), "f/e/g"), memtool.ErrNotExist)
	unchanged(t, s, before, "Mkdir under a file")
}

func testRemoveFile(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustWrite(t, s, "sibling", "y")
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/g", "z")
	// Listed before: a listing the store keeps must not outlive the removal.
	checkEntries(t, s, "", []memtool.FileInfo{file("f", 1), file("sibling", 1), dir("d")})
	checkEntries(t, s, "d", []memtool.FileInfo{file("g", 1)})
	wantNoErr(t, "Remove(f)", s.Remove(t.Context(), "f"))
	wantNoErr(t, "Remove(d/g)", s.Remove(t.Context(), "d/g"))
	checkMissing(t, s, "f")
	checkMissing(t, s, "d/g")
	checkFile(t, s, "sibling", "y")
	checkEntries(t, s, "", []memtool.FileInfo{file("sibling", 1), dir("d")})
	checkEntries(t, s, "d", nil)
	// A removed name is free again: nothing of the old file is left at it.
	wantNoErr(t, "WriteFile(f, CreateOnly) after Remove(f)", s.WriteFile(t.Context(), "f", []byte("again"), memtool.CreateOnly))
	checkFile(t, s, "f", "again")
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
	wantNoErr(t, "Mkdir(d) after Remove(d)", s.Mkdir(t.Context(), "d"))
	checkEntries(t, s, "d", nil)
}

// "a directory with entries: ErrNotEmpty."
func testRemoveNotEmpty(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	mustWrite(t, s, "d/x", "x")
	mustMkdir(t, s, "e")
	mustMkdir(t, s, "e/sub")
	refuseEach(t, s, "Remove of non-empty directories", memtool.ErrNotEmpty, "Remove(%q)", s.Remove, "d", "e")
}

// "Missing: ErrNotExist."
func testRemoveMissing(t *testing.T, s memtool.Store) {
	checkRemoveMissing(t, s, "Remove", s.Remove)
}

// refuseEach calls call, named by the format callName (%q: the name), on
// each of names, wants target from each, and wants s unchanged after them
// all (what: the calls, for the message).
func refuseEach(t *testing.T, s memtool.Store, what string, target error, callName string, call func(ctx context.Context, name string) error, names ...string) {
	t.Helper()
	before := snapshot(t, s)
	for _, name := range names {
		WantErr(t, fmt.Sprintf(callName, name), call(t.Context(), name), target)
	}
	unchanged(t, s, before, what)
}

// checkRemoveMissing checks that remove, which is the method op of s,
// fails with ErrNotExist for missing names and names under a file, and
// changes nothing.
func checkRemoveMissing(t *testing.T, s memtool.Store, op string, remove func(ctx context.Context, name string) error) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	before := snapshot(t, s)
	for _, name := range []string{"nope", "d/nope", "nope/x"} {
		WantErr(t, fmt.Sprintf("%s(%q)", op, name), remove(t.Context(), name), memtool.ErrNotExist)
	}
	wantErrUnderFile(t, op+`("f/x")`, remove(t.Context(), "f/x"))
	unchanged(t, s, before, op+" of missing names")
}
