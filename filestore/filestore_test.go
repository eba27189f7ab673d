package filestore_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/storetest"
)

// The suites run on a new store in a directory of its own.
func newStore(t *testing.T) memtool.Store { return open(t, t.TempDir(), nil) }

func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

func TestTenants(t *testing.T) { storetest.RunTenants(t, newStore) }

// open opens the store in dir (opts nil: the defaults), closed at t's end.
func open(t *testing.T, dir string, opts *filestore.Options) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func writeHostFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func hostContent(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(data)
}

func names(entries []memtool.FileInfo) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// Files are created 0600 and directories 0700, however they came to be:
// created, replaced, updated, renamed, or the store's own directory.
func TestModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := open(t, dir, nil)
	ctx := t.Context()
	steps := []struct {
		name string
		err  error
	}{
		{"Mkdir(d)", s.Mkdir(ctx, "d")},
		{"WriteFile(d/created, CreateOnly)", s.WriteFile(ctx, "d/created", []byte("a"), memtool.CreateOnly)},
		{"WriteFile(replaced, Replace)", s.WriteFile(ctx, "replaced", []byte("b"), memtool.Replace)},
		{"WriteFile(updated, CreateOnly)", s.WriteFile(ctx, "updated", []byte("c"), memtool.CreateOnly)},
		{"Update(updated)", s.Update(ctx, "updated", 100, func(old []byte) ([]byte, error) { return append(old, 'd'), nil })},
		{"Mkdir(d/sub)", s.Mkdir(ctx, "d/sub")},
		{"Rename(d/sub, moved)", s.Rename(ctx, "d/sub", "moved")},
	}
	for _, st := range steps {
		if st.err != nil {
			t.Fatalf("%s: %v", st.name, st.err)
		}
	}
	for name, want := range map[string]fs.FileMode{
		"":          fs.ModeDir | 0o700,
		"d":         fs.ModeDir | 0o700,
		"moved":     fs.ModeDir | 0o700,
		"d/created": 0o600,
		"replaced":  0o600,
		"updated":   0o600,
	} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("lstat %q: %v", name, err)
		} else if fi.Mode() != want {
			t.Errorf("mode of %q = %v, want %v", name, fi.Mode(), want)
		}
	}
}

// A file that was more open keeps no wider mode after an Update.
func TestUpdateNarrowsMode(t *testing.T) {
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "f"), "old")
	if err := os.Chmod(filepath.Join(dir, "f"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	if err := s.Update(t.Context(), "f", 100, func([]byte) ([]byte, error) { return []byte("new"), nil }); err != nil {
		t.Fatalf("Update(f): %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after Update = %v, want 0600", fi.Mode().Perm())
	}
}

// Temp files and trash that a crashed writer left anywhere in the tree are
// swept at Open when the writer's mark is still in the lock file (here the
// mark of an older version, which the clean mark then replaces); everything
// else stays, and nothing outside is followed.
func TestSweepAtOpen(t *testing.T) {
	testSweep(t, func(t *testing.T, dir string) {
		writeHostFile(t, filepath.Join(dir, ".memtool.lock"), "pid 1 writing\n")
		open(t, dir, nil)
		if got := hostContent(t, filepath.Join(dir, ".memtool.lock")); got != "clean\n" {
			t.Errorf("lock file after recovery = %q, want the clean mark", got)
		}
	})
}

// Without a crash mark, Open does not walk the tree (its cost does not grow
// with the store); Sweep does the same cleanup on demand.
func TestSweep(t *testing.T) {
	testSweep(t, func(t *testing.T, dir string) {
		s := open(t, dir, nil)
		if _, err := os.Lstat(filepath.Join(dir, ".memtool-tmp-0123456789abcdef")); err != nil {
			t.Errorf("a clean Open swept the tree: %v", err)
		}
		if err := s.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func testSweep(t *testing.T, sweep func(t *testing.T, dir string)) {
	base := t.TempDir()
	dir := filepath.Join(base, "store")
	outside := filepath.Join(base, "outside")
	writeHostFile(t, filepath.Join(outside, "keep.txt"), "outside")
	leftovers := []string{
		".memtool-tmp-0123456789abcdef",
		"d/.memtool-tmp-aa",
		"d/e/.memtool-tmp-bb",
		".memtool-trash-cc/sub/file.txt",
		"d/.memtool-trash-dd/x",
	}
	for _, name := range leftovers {
		writeHostFile(t, filepath.Join(dir, name), "debris")
	}
	kept := map[string]string{
		"notes.txt":   "notes",
		"d/keep.txt":  "kept",
		"d/e/f.txt":   "kept too",
		".hidden":     "hidden, but the model's",
		".memtoolish": "not debris: no temp or trash prefix",
	}
	for name, data := range kept {
		writeHostFile(t, filepath.Join(dir, name), data)
	}
	// A leftover that is a symlink to a directory outside: the link goes, not
	// what it points to.
	if err := os.Symlink(outside, filepath.Join(dir, "d", ".memtool-trash-link")); err != nil {
		t.Fatal(err)
	}

	sweep(t, dir)
	for _, name := range append(leftovers, "d/.memtool-trash-link") {
		// The leftover's top entry must be gone (and so everything in it).
		top := name
		if i := strings.Index(name, ".memtool-"); i >= 0 {
			if j := strings.IndexByte(name[i:], '/'); j >= 0 {
				top = name[:i+j]
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, top)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was not swept at Open (lstat: %v)", top, err)
		}
	}
	for name, data := range kept {
		if got := hostContent(t, filepath.Join(dir, name)); got != data {
			t.Errorf("%s = %q after Open, want %q", name, got, data)
		}
	}
	if got := hostContent(t, filepath.Join(outside, "keep.txt")); got != "outside" {
		t.Errorf("outside/keep.txt = %q after Open, want it untouched", got)
	}
}

// ReadDir never returns the store's own names (.memtool*): its lock file,
// temp files or trash; other hidden names are the model's and are returned.
func TestReadDirHidesOwnNames(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	// Debris made after Open, as a crash of another process would leave
	// it, and the lock file a writer makes.
	writeHostFile(t, filepath.Join(dir, ".memtool.lock"), "clean\n")
	writeHostFile(t, filepath.Join(dir, ".memtool-tmp-zz"), "x")
	writeHostFile(t, filepath.Join(dir, "d", ".memtool-trash-yy", "f"), "x")
	writeHostFile(t, filepath.Join(dir, "d", ".memtool.lock"), "")
	writeHostFile(t, filepath.Join(dir, ".hidden"), "h")
	writeHostFile(t, filepath.Join(dir, "d", "f"), "f")
	if _, err := os.Lstat(filepath.Join(dir, ".memtool.lock")); err != nil {
		t.Fatalf("the lock file is not where this test expects it: %v", err)
	}
	for d, want := range map[string][]string{"": {".hidden", "d"}, "d": {"f"}} {
		entries, err := s.ReadDir(t.Context(), d)
		if err != nil {
			t.Fatalf("ReadDir(%q): %v", d, err)
		}
		if got := names(entries); !slices.Equal(got, want) {
			t.Errorf("ReadDir(%q) names = %q, want %q", d, got, want)
		}
	}
}

// A symlink that leads outside the root is refused with ErrEscapes for every
// operation that would go through it; the outside is never read or changed,
// and ReadDir leaves such links out without revealing their targets' sizes.
func TestSymlinkOutsideRefused(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "store")
	outside := filepath.Join(base, "outside")
	secret := strings.Repeat("OUTSIDE-SECRET ", 823) // an unusual size: 12345 bytes
	writeHostFile(t, filepath.Join(outside, "secret.txt"), secret)
	s := open(t, dir, nil)
	links := map[string]string{
		"outdir":      "../outside",                          // relative, to a directory
		"outfile":     "../outside/secret.txt",               // relative, to a file
		"absfile":     filepath.Join(outside, "secret.txt"),  // absolute
		"d/deepout":   "../../outside/secret.txt",            // from a subdirectory
		"dangling":    "../outside/nothing-here",             // to nothing, outside
		"loop":        "loop",                                // to itself
		"sneaky":      "d/../../outside/secret.txt",          // in, then out
		"prefixsib":   "../store-backup/file",                // a sibling sharing the prefix
		"d/viaparent": "../outdir/secret.txt",                // through another escaping link
		"absinside":   filepath.Join(dir, "d", "inside.txt"), // absolute, even if it points inside
	}
	writeHostFile(t, filepath.Join(base, "store-backup", "file"), "backup")
	writeHostFile(t, filepath.Join(dir, "d", "inside.txt"), "inside")
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	for _, name := range []string{"outfile", "absfile", "d/deepout", "sneaky", "outdir/secret.txt", "d/viaparent", "prefixsib", "absinside", "loop"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			_, err := s.Stat(ctx, name)
			storetest.WantErr(t, "Stat", err, memtool.ErrEscapes)
			data, err := s.ReadFile(ctx, name, 1<<20)
			storetest.WantErr(t, "ReadFile", err, memtool.ErrEscapes)
			if len(data) > 0 {
				t.Errorf("ReadFile returned %d bytes", len(data))
			}
			called := false
			err = s.Update(ctx, name, 1<<20, func(old []byte) ([]byte, error) {
				called = true
				return []byte("PWNED"), nil
			})
			storetest.WantErr(t, "Update", err, memtool.ErrEscapes)
			if called {
				t.Errorf("Update called fn with the content behind the link")
			}
		})
	}
	// Writing, creating and removing through an escaping directory link.
	storetest.WantErr(t, "WriteFile(outdir/new, CreateOnly)", s.WriteFile(ctx, "outdir/new", []byte("PWNED"), memtool.CreateOnly), memtool.ErrEscapes)
	storetest.WantErr(t, "WriteFile(outdir/secret.txt, Replace)", s.WriteFile(ctx, "outdir/secret.txt", []byte("PWNED"), memtool.Replace), memtool.ErrEscapes)
	storetest.WantErr(t, "Mkdir(outdir/newdir)", s.Mkdir(ctx, "outdir/newdir"), memtool.ErrEscapes)
	storetest.WantErr(t, "Remove(outdir/secret.txt)", s.Remove(ctx, "outdir/secret.txt"), memtool.ErrEscapes)
	storetest.WantErr(t, "RemoveAll(outdir/secret.txt)", s.RemoveAll(ctx, "outdir/secret.txt"), memtool.ErrEscapes)
	storetest.WantErr(t, "Rename(outdir/secret.txt, stolen)", s.Rename(ctx, "outdir/secret.txt", "stolen"), memtool.ErrEscapes)
	storetest.WantErr(t, "Rename(d/inside.txt, outdir/planted)", s.Rename(ctx, "d/inside.txt", "outdir/planted"), memtool.ErrEscapes)
	_, err := s.ReadDir(ctx, "outdir")
	storetest.WantErr(t, "ReadDir(outdir)", err, memtool.ErrEscapes)
	// Replacing or removing the link itself may succeed, but only the link
	// is affected.
	s.WriteFile(ctx, "outfile", []byte("replaces the link, not the target"), memtool.Replace)
	s.RemoveAll(ctx, "outdir")
	s.Remove(ctx, "absfile")

	entries, err := s.ReadDir(ctx, "")
	if err != nil {
		t.Fatalf("ReadDir(\"\"): %v", err)
	}
	for _, e := range entries {
		if e.Size == int64(len(secret)) {
			t.Errorf("ReadDir reveals the size of the outside file through %q", e.Name)
		}
		if _, isLink := links[e.Name]; isLink && e.Name != "outfile" {
			t.Errorf("ReadDir lists the escaping link %q as %+v", e.Name, e)
		}
	}
	entries, err = s.ReadDir(ctx, "d")
	if err != nil {
		t.Fatalf("ReadDir(d): %v", err)
	}
	if got := names(entries); !slices.Equal(got, []string{"inside.txt"}) {
		t.Errorf("ReadDir(d) names = %q, want only inside.txt", got)
	}
	if got := hostContent(t, filepath.Join(outside, "secret.txt")); got != secret {
		t.Errorf("the outside file changed")
	}
	outEntries, err := os.ReadDir(outside)
	if err != nil || len(outEntries) != 1 {
		t.Errorf("the outside directory changed: %v, %v", outEntries, err)
	}
	if got := hostContent(t, filepath.Join(base, "store-backup", "file")); got != "backup" {
		t.Errorf("the sibling directory changed")
	}
}

// A symlink that stays inside the root is followed.
func TestSymlinkInsideFollowed(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	writeHostFile(t, filepath.Join(dir, "real", "f.txt"), "through the link")
	for name, target := range map[string]string{
		"filelink":      "real/f.txt",
		"dirlink":       "real",
		"real/up":       "../real/f.txt",
		"chain":         "filelink",
		"dirlink2":      "./real/../real",
		"real/selfroot": "..",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	for _, name := range []string{"filelink", "dirlink/f.txt", "real/up", "chain", "dirlink2/f.txt", "real/selfroot/real/f.txt"} {
		data, err := s.ReadFile(ctx, name, 100)
		if err != nil || string(data) != "through the link" {
			t.Errorf("ReadFile(%q) = %q, %v; want the target's content", name, data, err)
		}
		fi, err := s.Stat(ctx, name)
		if err != nil || !fi.IsRegular() || fi.Size != int64(len("through the link")) {
			t.Errorf("Stat(%q) = %+v, %v; want the target's info", name, fi, err)
		}
	}
	fi, err := s.Stat(ctx, "dirlink")
	if err != nil || !fi.IsDir() {
		t.Errorf("Stat(dirlink) = %+v, %v; want a directory", fi, err)
	}
	if err := s.WriteFile(ctx, "dirlink/new.txt", []byte("via link"), memtool.CreateOnly); err != nil {
		t.Errorf("WriteFile(dirlink/new.txt): %v", err)
	} else if got := hostContent(t, filepath.Join(dir, "real", "new.txt")); got != "via link" {
		t.Errorf("real/new.txt = %q, want the file written through dirlink", got)
	}
	entries, err := s.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]memtool.FileInfo{
		"filelink": {Name: "filelink", Size: 16},
		"chain":    {Name: "chain", Size: 16},
		"dirlink":  {Name: "dirlink", Type: fs.ModeDir},
		"dirlink2": {Name: "dirlink2", Type: fs.ModeDir},
		"real":     {Name: "real", Type: fs.ModeDir},
	}
	for _, e := range entries {
		if w, ok := want[e.Name]; !ok || w != e {
			t.Errorf("ReadDir entry %+v, want %+v", e, w)
		}
		delete(want, e.Name)
	}
	for name := range want {
		t.Errorf("ReadDir(\"\") is missing %q", name)
	}
}

// irregularStore opens a store whose root holds irregular entries: a FIFO,
// a symlink to it, a file with two names, and a hard link to a file outside
// the root (the classic escape). It returns the store and the outside file.
func irregularStore(t *testing.T) (s *filestore.Store, dir, outsideFile string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "store")
	s = open(t, dir, nil)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "fifolink")); err != nil {
		t.Fatal(err)
	}
	writeHostFile(t, filepath.Join(dir, "linked"), "two names")
	if err := os.Link(filepath.Join(dir, "linked"), filepath.Join(dir, "linked2")); err != nil {
		t.Fatal(err)
	}
	outsideFile = filepath.Join(base, "outside", "secret.txt")
	writeHostFile(t, outsideFile, "OUTSIDE-SECRET")
	if err := os.Link(outsideFile, filepath.Join(dir, "hardout")); err != nil {
		t.Fatal(err)
	}
	return s, dir, outsideFile
}

var irregularNames = []string{"fifo", "fifolink", "hardout", "linked", "linked2"} // sorted

// FIFOs and files with two hard links are ErrIrregular for every call that
// would open them, and no call blocks on a FIFO (a blocked call hangs this
// test until go test's timeout).
func TestIrregularFiles(t *testing.T) {
	s, dir, outsideFile := irregularStore(t)
	ctx := t.Context()
	for _, name := range irregularNames {
		t.Run(name, func(t *testing.T) {
			fi, err := s.Stat(ctx, name)
			if err != nil || fi.Type != fs.ModeIrregular || fi.Size != 0 {
				t.Errorf("Stat = %+v, %v; want ModeIrregular and size 0", fi, err)
			}
			data, err := s.ReadFile(ctx, name, 1<<20)
			storetest.WantErr(t, "ReadFile", err, memtool.ErrIrregular)
			if len(data) > 0 {
				t.Errorf("ReadFile returned %q", data)
			}
			called := false
			err = s.Update(ctx, name, 1<<20, func([]byte) ([]byte, error) { called = true; return []byte("x"), nil })
			storetest.WantErr(t, "Update", err, memtool.ErrIrregular)
			if called {
				t.Errorf("Update called fn")
			}
			storetest.WantErr(t, "WriteFile(CreateOnly)", s.WriteFile(ctx, name, []byte("x"), memtool.CreateOnly), memtool.ErrExist)
		})
	}
	entries, err := s.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(entries); !slices.Equal(got, irregularNames) {
		t.Errorf("ReadDir names = %q, want %q", got, irregularNames)
	}
	for _, e := range entries {
		if e.Type != fs.ModeIrregular || e.Size != 0 {
			t.Errorf("ReadDir entry %+v, want ModeIrregular with size 0", e)
		}
	}
	if got := hostContent(t, outsideFile); got != "OUTSIDE-SECRET" {
		t.Errorf("the outside file changed: %q", got)
	}
	if got := hostContent(t, filepath.Join(dir, "linked")); got != "two names" {
		t.Errorf("the hard-linked file changed: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
}

// "with Replace it fails with … ErrIrregular if something other than a
// regular file is there": Stat reports these entries as ModeIrregular, so
// Replace refuses them and changes nothing (each on a store of its own).
func TestReplaceIrregular(t *testing.T) {
	for _, name := range irregularNames {
		t.Run(name, func(t *testing.T) {
			s, dir, outsideFile := irregularStore(t)
			before, err := os.Lstat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			err = s.WriteFile(t.Context(), name, []byte("x"), memtool.Replace)
			storetest.WantErr(t, "WriteFile(Replace)", err, memtool.ErrIrregular)
			after, err := os.Lstat(filepath.Join(dir, name))
			if err != nil || !os.SameFile(before, after) {
				t.Errorf("%s is no longer the entry it was", name)
			}
			if got := hostContent(t, outsideFile); got != "OUTSIDE-SECRET" {
				t.Errorf("the outside file changed: %q", got)
			}
		})
	}
}

// Two stores opened on one directory, as two processes would, never lose
// each other's updates: the lock is the directory's, not the Store value's.
func TestTwoStoresShareUpdates(t *testing.T) {
	dir := t.TempDir()
	stores := []*filestore.Store{open(t, dir, nil), open(t, dir, nil)}
	if err := stores[0].WriteFile(t.Context(), "log", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	perStore := 20
	if testing.Short() {
		perStore = 8
	}
	var wg sync.WaitGroup
	errs := make([]error, len(stores))
	for i, s := range stores {
		wg.Go(func() {
			for j := range perStore {
				line := []byte{byte('A' + i), byte('a' + j), '\n'}
				if err := s.Update(context.Background(), "log", 1<<20, func(old []byte) ([]byte, error) {
					return append(old, line...), nil
				}); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := stores[1].ReadFile(t.Context(), "log", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	slices.Sort(lines)
	lines = slices.Compact(lines)
	if len(lines) != len(stores)*perStore {
		t.Errorf("the log has %d distinct lines, want %d: some updates were lost", len(lines), len(stores)*perStore)
	}
}

// The texts the model gets for what only a file store can hold
// (DEVIATIONS.md: D11, "Hard links, FIFOs, sockets, devices" and "Symbolic
// links"): a FIFO is an unsupported file type for view and not a file for
// edits; a link out of the root is refused as an escape; neither appears in
// a listing.
func TestMemoryTextsForIrregularEntries(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "store")
	s := open(t, dir, nil)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	writeHostFile(t, filepath.Join(base, "outside", "secret.txt"), "OUTSIDE-SECRET")
	if err := os.Symlink("../outside/secret.txt", filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	writeHostFile(t, filepath.Join(dir, "plain.txt"), "plain")
	mem := memtool.New(s, nil)
	for _, c := range []struct{ input, want string }{
		{`{"command":"view","path":"/memories/fifo"}`, "Error: Unsupported file type for /memories/fifo"},
		{`{"command":"str_replace","path":"/memories/fifo","old_str":"a","new_str":"b"}`, "Error: The path /memories/fifo is not a file."},
		{`{"command":"insert","path":"/memories/fifo","insert_line":0,"insert_text":"x"}`, "Error: The path /memories/fifo is not a file."},
		{`{"command":"create","path":"/memories/fifo","file_text":"x"}`, "Error: File /memories/fifo already exists"},
		{`{"command":"view","path":"/memories/escape"}`, "Error: Path would escape /memories directory via symlink"},
		{`{"command":"str_replace","path":"/memories/escape","old_str":"OUTSIDE","new_str":"PWNED"}`, "Error: Path would escape /memories directory via symlink"},
		{`{"command":"view","path":"/memories"}`, "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n5B\t/memories/plain.txt"},
	} {
		r := mem.Run(t.Context(), []byte(c.input))
		if r.Text != c.want || r.IsError != strings.HasPrefix(c.want, "Error: ") {
			t.Errorf("%s\n got %q (is_error %v)\nwant %q", c.input, r.Text, r.IsError, c.want)
		}
	}
	if got := hostContent(t, filepath.Join(base, "outside", "secret.txt")); got != "OUTSIDE-SECRET" {
		t.Errorf("the outside file changed: %q", got)
	}
}
