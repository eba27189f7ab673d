//go:build linux

package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A directory whose entries are more than ListDir's limit is read once:
// the names it read looking for one moment's listing are handed on with
// the rest, not read again from the start, nor read once per doubling of
// the buffer. Every name is given once.
func TestListDirReadsManyNamesOnce(t *testing.T) {
	ctx := context.Background()
	dir, s := openTemp(t)
	want := layNotes(t, dir, 3000)
	read := 0
	readHook = func(n int) { read += n }
	defer func() { readHook = nil }()

	var pass []string
	if err := s.ListNames(ctx, "", func(n string) bool { pass = append(pass, n); return true }); err != nil {
		t.Fatal(err)
	}
	onePass := read
	slices.Sort(pass)
	if !slices.Equal(pass, want) {
		t.Fatalf("ListNames gave %d names, want the %d written", len(pass), len(want))
	}
	// A read that a signal cuts short is read again (see snapshot), so
	// the least of a few tries is the one to compare.
	for _, max := range []int{5, 100, 1000} {
		least := -1
		for range 5 {
			read = 0
			var got []string
			entries, many, err := s.ListDir(ctx, "", max, func(n string) bool { got = append(got, n); return true })
			if err != nil || !many || entries != nil {
				t.Fatalf("ListDir(max %d) = %d entries, many %v, %v", max, len(entries), many, err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("ListDir(max %d) gave %d names (%d distinct), want each of the %d once", max, len(got), len(slices.Compact(got)), len(want))
			}
			if least < 0 || read < least {
				least = read
			}
		}
		if least != onePass {
			t.Errorf("ListDir(max %d) read at least %d bytes of entries; one pass over the directory is %d", max, least, onePass)
		}
	}
}

// openTemp opens a store in a new directory, closed when t ends.
func openTemp(t *testing.T) (string, *Store) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memories")
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return dir, s
}

// layNotes writes n empty files into dir, around the store, and returns
// their names in order.
func layNotes(t *testing.T, dir string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("note-%06d.md", i)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}
