package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore/s3test"
)

// Listings of more than one page (the server answers at most two keys a
// page) list every entry once, derive directories from their keys, and
// let RemoveAll and Rename reach every object, without touching a sibling
// whose name starts with the same text.
func TestS3ListsManyPages(t *testing.T) {
	ctx := context.Background()
	srv := startS3With(t, &s3test.Options{MaxKeys: 2})
	s := srv.open(t, srv.newBucket(t), nil)
	for _, d := range []string{"a", "a/sub", "a/sub2", "a-", "ab"} {
		mkdir(t, s, d)
	}
	var want []string
	for i := range 5 {
		write(t, s, fmt.Sprintf("a/f%d", i), "x")
		write(t, s, fmt.Sprintf("a/sub/g%d", i), "y")
		want = append(want, fmt.Sprintf("f%d", i))
	}
	write(t, s, "a-/keep", "k")
	write(t, s, "ab/keep", "k")
	want = append(want, "sub", "sub2")
	slices.Sort(want)
	fis, err := s.ReadDir(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fi := range fis {
		got = append(got, fi.Name)
		if isDir := fi.Name == "sub" || fi.Name == "sub2"; fi.IsDir() != isDir {
			t.Errorf("%s: IsDir %v", fi.Name, fi.IsDir())
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("ReadDir(a) = %v, want %v", got, want)
	}
	if err := s.Rename(ctx, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveAll(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "b/sub", "b/f0"} {
		if _, err := s.Stat(ctx, name); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want ErrNotExist", name, err)
		}
	}
	checkContents(t, s, map[string]string{"a-/keep": "k", "ab/keep": "k"})
	fis, err = s.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, fi := range fis {
		got = append(got, fi.Name)
	}
	if !slices.Equal(got, []string{"a-", "ab"}) {
		t.Errorf("ReadDir(root) = %v", got)
	}
}
