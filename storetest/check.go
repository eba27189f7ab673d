package storetest

import (
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

// makeTree makes the directories and files of want in s, each parent
// before what is in it, and returns want.
func makeTree(t *testing.T, s memtool.Store, want tree) tree {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if data, ok := strings.CutPrefix(want[name], "file:"); ok {
			mustWrite(t, s, name, data)
		} else {
			mustMkdir(t, s, name)
		}
	}
	return want
}

// someTree is a file, a directory with a file in it and an empty
// directory: a store with one of everything.
var someTree = tree{"f": "file:old", "d": "dir", "d/x": "file:x", "empty": "dir"}

// WantErr reports, naming the call, unless errors.Is(err, target).
func WantErr(t testing.TB, call string, err, target error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s succeeded, want an error matching %v", call, target)
	case !errors.Is(err, target):
		t.Errorf("%s = %v, want an error matching %v (errors.Is)", call, err, target)
	}
}

// wantErrUnderFile is WantErr for a name whose parent is a file, where the
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

// Snapshot returns everything in s, read through its own methods: each
// name mapped to "dir" for a directory, "file:" and the content for a
// regular file. A test compares two snapshots to see that a call changed
// nothing, or reads a file's content from one.
func Snapshot(t *testing.T, s memtool.Store) map[string]string { return snapshot(t, s) }

// ReadText is the content of the file name in s, read whole (up to 1 MiB);
// t fails at once if it cannot be read.
func ReadText(t testing.TB, s memtool.Store, name string) string {
	t.Helper()
	data, err := s.ReadFile(context.Background(), name, 1<<20)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return string(data)
}

// Usage counts the entries below the root of s (files and directories)
// and the bytes of its files, as a walk through s finds them.
func Usage(t testing.TB, s memtool.Store) (entries, bytes int64) {
	t.Helper()
	err := memtool.Walk(context.Background(), s, "", func(name string, fi memtool.FileInfo) error {
		if name != "" {
			entries++
			bytes += fi.Size
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries, bytes
}

// Names lists every entry in s below the root, walked with memtool.Walk
// (no file is read), sorted; a directory's name ends in a slash.
func Names(t testing.TB, s memtool.Store) []string {
	t.Helper()
	var out []string
	err := memtool.Walk(context.Background(), s, "", func(name string, fi memtool.FileInfo) error {
		if fi.IsDir() && name != "" {
			name += "/"
		}
		if name != "" {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

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
	if diffs := changes(before, snapshot(t, s)); diffs != nil {
		t.Errorf("after %s, which failed, the store changed:\n%s", call, strings.Join(diffs, "\n"))
	}
}

// changes lists how after differs from before, one line a name; nil if
// they are the same.
func changes(before, after tree) []string {
	if maps.Equal(before, after) {
		return nil
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
	return diffs
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
