package memtool_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// namesStore is a NameLister over a memory store that counts Stat and
// ListNames calls. Its ListNames also gives the names in phantoms, which
// Stat reports missing (as a directory store's links out are reported
// irregular).
type namesStore struct {
	memtool.Store
	phantoms    []string
	stats, list atomic.Int64
	readDirs    sync.Map // directory name → *atomic.Int64, ReadDir calls
}

func (s *namesStore) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	n, _ := s.readDirs.LoadOrStore(name, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return s.Store.ReadDir(ctx, name)
}

// readDirCalls is how many times ReadDir read the directory name.
func (s *namesStore) readDirCalls(name string) int64 {
	if n, ok := s.readDirs.Load(name); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

func (s *namesStore) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, name)
}

func (s *namesStore) ListNames(ctx context.Context, name string, fn func(string) bool) error {
	s.list.Add(1)
	infos, err := s.Store.ReadDir(ctx, name)
	if err != nil {
		return err
	}
	for _, fi := range infos {
		if !fn(fi.Name) {
			return nil
		}
	}
	if name == "" {
		for _, n := range s.phantoms {
			if !fn(n) {
				return nil
			}
		}
	}
	return nil
}

// Over a NameLister, a listing of a large directory Stats only the
// entries it shows, and answers as the listing by ReadDir does.
func TestListingStatsOnlyWhatItShows(t *testing.T) {
	inner := memstore.New()
	writeFiles(t, inner, 3000, func(i int) string { return fmt.Sprintf("n%04d.md", 2999-i) }, "x")
	s := &namesStore{Store: inner}
	got := viewAsReadDir(t, s, inner)
	shown := strings.Count(got.Text, "\n1B\t")
	if !strings.Contains(got.Text, "itself holds 3000 names") || shown < 500 {
		t.Fatalf("unexpected listing (%d entries shown):\n%.300s", shown, got.Text)
	}
	// The root's own Stat, one for each entry shown, and one for each of
	// the few measured past the cut before the view knew it was cut
	// (they fill the room kept for the note: 300 characters, at least
	// 20 per line here).
	if n := s.stats.Load(); n > int64(shown)+1+300/20 {
		t.Errorf("the listing made %d Stat calls for %d entries shown", n, shown)
	}
}

// When the smallest names turn out unusable, a listing by names reads the
// names again for the next smallest, as often as it takes, and answers as
// the listing by ReadDir does.
func TestListingByNamesSkipsUnusable(t *testing.T) {
	inner, phantoms := phantomRoot(t)
	s := &namesStore{Store: inner, phantoms: phantoms}
	viewPastPhantoms(t, s, inner)
	if n := s.list.Load(); n < 3 {
		t.Errorf("ListNames was called %d times; the phantoms fill more than two batches", n)
	}
}

// A large subdirectory one level down is listed by names too: the view
// answers as the listing by ReadDir does, and Stats only what it shows,
// while small subdirectories beside it are read as before.
func TestListingLargeSubdirectoryByNames(t *testing.T) {
	inner := bigBetweenSmall(t)
	s := &namesStore{Store: inner}
	got := viewAsReadDir(t, s, inner)
	shown := strings.Count(got.Text, "\n1B\t/memories/big/")
	if shown < 500 || !strings.Contains(got.Text, "/memories/a/s2.md") {
		t.Fatalf("unexpected listing (%d entries of big shown):\n%.300s", shown, got.Text)
	}
	// big is never read whole, the small ones are; the Stats are the
	// root's own, one for each entry of big shown, and the few measured
	// past the cut (as in TestListingStatsOnlyWhatItShows).
	if n := s.readDirCalls("big"); n != 0 {
		t.Errorf("big was read with ReadDir %d times; want its names only", n)
	}
	if n := s.readDirCalls("a"); n != 1 {
		t.Errorf("a was read with ReadDir %d times; want once", n)
	}
	if n := s.stats.Load(); n > int64(shown)+1+300/20 {
		t.Errorf("the listing made %d Stat calls for %d entries shown", n, shown)
	}
}

// Small subdirectories cost a view at most 16 extra reads of names: one
// each while there are at most 16, none when there are more.
func TestListingProbesFewSubdirectories(t *testing.T) {
	ctx := context.Background()
	inner := fortyDirs(t, 2)
	s := &namesStore{Store: inner}
	viewAsReadDir(t, s, inner)
	if n := s.list.Load(); n != 1 {
		t.Errorf("ListNames was called %d times over 40 subdirectories; want the root's alone", n)
	}
	for i := 16; i < 40; i++ {
		if err := memtool.RemoveAll(ctx, inner, fmt.Sprintf("d%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	s.list.Store(0)
	viewAsReadDir(t, s, inner)
	if n := s.list.Load(); n != 1+16 {
		t.Errorf("ListNames was called %d times over 16 subdirectories; want the root's and each one's", n)
	}
}

// phantomRoot is a memory store of 3,000 files and, for a namesStore
// over it, more unusable names, all smaller than every usable one, than
// one batch of a listing by names holds (at most 16,000/15 names here).
func phantomRoot(t *testing.T) (memtool.Store, []string) {
	inner := memstore.New()
	writeFiles(t, inner, 3000, func(i int) string { return fmt.Sprintf("n%04d.md", i) }, "x")
	var phantoms []string
	for i := range 2500 {
		phantoms = append(phantoms, fmt.Sprintf("a%04d.md", i))
	}
	return inner, phantoms
}

// viewPastPhantoms checks that a view of phantomRoot's store through s
// is the listing by ReadDir, with the phantoms counted in its note (D17).
func viewPastPhantoms(t *testing.T, s, inner memtool.Store) {
	t.Helper()
	in := []byte(`{"command":"view","path":"/memories"}`)
	got := memtool.New(s, nil).Run(t.Context(), in)
	want := memtool.New(inner, nil).Run(t.Context(), in)
	want.Text = strings.Replace(want.Text, "itself holds 3000 names", "itself holds 5500 names", 1)
	if got != want {
		t.Fatalf("by names:\n%.300s\nby ReadDir:\n%.300s", got.Text, want.Text)
	}
}

// fortyDirs is a memory store holding the directories d00 to d39, of two
// files each but d00, which holds first.
func fortyDirs(t *testing.T, first int) memtool.Store {
	inner := memstore.New()
	for i := range 40 {
		d := fmt.Sprintf("d%02d", i)
		if err := inner.Mkdir(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		n := 2
		if i == 0 {
			n = first
		}
		writeFiles(t, inner, n, func(j int) string { return fmt.Sprintf("%s/f%04d.md", d, j) }, "x")
	}
	return inner
}

// bigBetweenSmall is a memory store holding the directories a and c of
// three files each and, between them, big of 3,000 files.
func bigBetweenSmall(t *testing.T) memtool.Store {
	inner := memstore.New()
	for _, d := range []string{"a", "big", "c"} {
		if err := inner.Mkdir(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, inner, 3, func(i int) string { return fmt.Sprintf("a/s%d.md", i) }, "x")
	writeFiles(t, inner, 3000, func(i int) string { return fmt.Sprintf("big/n%04d.md", 2999-i) }, "x")
	writeFiles(t, inner, 3, func(i int) string { return fmt.Sprintf("c/s%d.md", i) }, "x")
	return inner
}

// viewAsReadDir views /memories through s and checks that the answer is
// the one of inner, which s wraps, listed by ReadDir.
func viewAsReadDir(t *testing.T, s, inner memtool.Store) memtool.Result {
	t.Helper()
	in := []byte(`{"command":"view","path":"/memories"}`)
	got, want := memtool.New(s, nil).Run(t.Context(), in), memtool.New(inner, nil).Run(t.Context(), in)
	if got != want {
		t.Fatalf("by names:\n%.300s\nby ReadDir:\n%.300s", got.Text, want.Text)
	}
	return got
}

// dirsStore is a DirLister over a namesStore: it counts its ListDir calls
// per directory, and its names for a many answer include the phantoms.
type dirsStore struct {
	*namesStore
	listDirs sync.Map // directory name → *atomic.Int64
}

func (s *dirsStore) ListDir(ctx context.Context, name string, max int, fn func(string) bool) ([]memtool.FileInfo, bool, error) {
	n, _ := s.listDirs.LoadOrStore(name, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	infos, err := s.Store.ReadDir(ctx, name)
	if err != nil {
		return nil, false, err
	}
	var phantoms []string
	if name == "" {
		phantoms = s.phantoms
	}
	if len(infos)+len(phantoms) <= max {
		return infos, false, nil
	}
	for _, fi := range infos {
		if !fn(fi.Name) {
			return nil, true, nil
		}
	}
	for _, p := range phantoms {
		if !fn(p) {
			break
		}
	}
	return nil, true, nil
}

func (s *dirsStore) listDirCalls(name string) int64 {
	if n, ok := s.listDirs.Load(name); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// Over a DirLister, a view reads each directory it lists once: neither
// ReadDir nor ListNames is called, small subdirectories included, while
// it has at most 16 of them; a large subdirectory is listed by its
// names, Stat'ing only what is shown; unusable smallest names are read
// past with ListDir again. Every answer is the listing by ReadDir's.
func TestListingReadsEachDirectoryOnce(t *testing.T) {
	inner := bigBetweenSmall(t)
	s := &dirsStore{namesStore: &namesStore{Store: inner}}
	got := viewAsReadDir(t, s, inner)
	shown := strings.Count(got.Text, "\n1B\t/memories/big/")
	if shown < 500 || !strings.Contains(got.Text, "/memories/a/s2.md") {
		t.Fatalf("unexpected listing (%d entries of big shown):\n%.300s", shown, got.Text)
	}
	for _, d := range []string{"", "a", "big"} { // c comes after the cut
		if n := s.listDirCalls(d); n != 1 {
			t.Errorf("ListDir(%q) was called %d times; want once", d, n)
		}
		if n := s.readDirCalls(d); n != 0 {
			t.Errorf("ReadDir(%q) was called %d times; want none", d, n)
		}
	}
	if n := s.list.Load(); n != 0 {
		t.Errorf("ListNames was called %d times; want none", n)
	}
	if n := s.stats.Load(); n > int64(shown)+1+300/20 {
		t.Errorf("the listing made %d Stat calls for %d entries of big shown", n, shown)
	}

	// The root large, its smallest names unusable (more of them than a
	// batch holds): ListDir again for the next smallest.
	root, phantoms := phantomRoot(t)
	s = &dirsStore{namesStore: &namesStore{Store: root, phantoms: phantoms}}
	viewPastPhantoms(t, s, root)
	if n := s.listDirCalls(""); n < 3 {
		t.Errorf("ListDir was called %d times; the phantoms fill more than two batches", n)
	}
}

// Over a DirLister, every subdirectory is read with ListDir, however many
// the view has (reading by names costs no second read there): among 40
// subdirectories, a large one is listed by its names and Stats only what
// is shown, and no directory is read with ReadDir.
func TestListingManySubdirectoriesOnce(t *testing.T) {
	inner := fortyDirs(t, 3000)
	s := &dirsStore{namesStore: &namesStore{Store: inner}}
	got := viewAsReadDir(t, s, inner)
	shown := strings.Count(got.Text, "\n1B\t/memories/d00/")
	if shown < 500 {
		t.Fatalf("unexpected listing (%d entries of d00 shown):\n%.300s", shown, got.Text)
	}
	if n := s.stats.Load(); n > int64(shown)+1+300/20 {
		t.Errorf("the listing made %d Stat calls for %d entries of d00 shown", n, shown)
	}
	for _, d := range []string{"", "d00"} {
		if n := s.listDirCalls(d); n != 1 {
			t.Errorf("ListDir(%q) was called %d times; want once", d, n)
		}
	}
	for i := range 40 {
		if n := s.readDirCalls(fmt.Sprintf("d%02d", i)); n != 0 {
			t.Errorf("ReadDir(d%02d) was called %d times; want none", i, n)
		}
	}
}
