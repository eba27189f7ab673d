package storetest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

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
	makeTree(t, s, tree{"f": "file:12345", "d": "dir", "d/g": "file:abc", "empty": "file:"})
	checkStats(t, s, map[string]memtool.FileInfo{
		"f":     file("f", 5),
		"d/g":   file("g", 3),
		"empty": file("empty", 0),
	})
}

// (A directory has size 0.)
func testStatDir(t *testing.T, s memtool.Store) {
	makeTree(t, s, tree{"d": "dir", "d/e": "dir", "d/e/f": "file:content"})
	checkStats(t, s, map[string]memtool.FileInfo{"d": dir("d"), "d/e": dir("e")})
}

// checkStats checks what Stat says of each name of want.
func checkStats(t *testing.T, s memtool.Store, want map[string]memtool.FileInfo) {
	t.Helper()
	for name, w := range want {
		fi, err := s.Stat(t.Context(), name)
		if err != nil {
			t.Errorf("Stat(%q): %v", name, err)
		} else if fi != w {
			t.Errorf("Stat(%q) = %+v, want %+v", name, fi, w)
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
	// The caller owns what ReadFile returns: writing over it changes no file.
	for name, data := range contents {
		if got, err := s.ReadFile(t.Context(), name, noLimit); err == nil {
			for i := range got {
				got[i] = 'X'
			}
		}
		if got, err := s.ReadFile(t.Context(), name, noLimit); err != nil || string(got) != data {
			t.Errorf("after the caller wrote over what ReadFile(%q) returned, it reads %.40q, %v; want %.40q", name, got, err, data)
		}
	}
}

// "Missing: ErrNotExist."
func testReadFileMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	for _, name := range []string{"nope", "d/nope", "nope/x", "f/x"} {
		data, err := s.ReadFile(t.Context(), name, noLimit)
		WantErr(t, fmt.Sprintf("ReadFile(%q)", name), err, memtool.ErrNotExist)
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
		WantErr(t, fmt.Sprintf("ReadFile(%q)", name), err, memtool.ErrIsDir)
	}
}

// "A file larger than limit bytes is not read: ErrTooLarge."
func testReadFileLimit(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "ten", "0123456789")
	mustWrite(t, s, "empty", "")
	for _, limit := range []int64{10, 11, 1 << 62, math.MaxInt64} { // the largest: no limit
		data, err := s.ReadFile(t.Context(), "ten", limit)
		if err != nil || string(data) != "0123456789" {
			t.Errorf("ReadFile(ten, limit %d) = %q, %v; want the whole file", limit, data, err)
		}
	}
	for _, limit := range []int64{9, 1, 0} {
		data, err := s.ReadFile(t.Context(), "ten", limit)
		WantErr(t, fmt.Sprintf("ReadFile(ten, limit %d)", limit), err, memtool.ErrTooLarge)
		if data != nil {
			t.Errorf("ReadFile(ten, limit %d) returned %q with its error", limit, data)
		}
	}
	if data, err := s.ReadFile(t.Context(), "empty", 0); err != nil || len(data) != 0 {
		t.Errorf("ReadFile(empty, limit 0) = %q, %v; want an empty file", data, err)
	}
}

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
	WantErr(t, `ReadDir("f")`, err, memtool.ErrNotDir)
}

// "Missing: ErrNotExist."
func testReadDirMissing(t *testing.T, s memtool.Store) {
	mustWrite(t, s, "f", "x")
	mustMkdir(t, s, "d")
	for _, name := range []string{"nope", "d/nope", "f/x"} {
		entries, err := s.ReadDir(t.Context(), name)
		WantErr(t, fmt.Sprintf("ReadDir(%q)", name), err, memtool.ErrNotExist)
		if entries != nil {
			t.Errorf("ReadDir(%q) returned %+v with its error", name, entries)
		}
	}
}
