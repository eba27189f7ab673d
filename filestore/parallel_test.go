package filestore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/storetest"
)

// The store where writes cannot stage (no O_TMPFILE: another system, an
// old kernel, a file system without it) makes every temp file under the
// lock, and still passes the suite.
func TestConformanceWithoutStaging(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		s := open(t, t.TempDir(), nil)
		filestore.NoStage(s)
		return s
	})
}

func hostStat(t *testing.T, name string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

func hostNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// An Update whose fn returns the content it was given writes nothing: the
// file keeps its inode and times, nothing is staged and no directory is
// fsynced. An Update that changes the file does all three, which shows
// that the checks see them.
func TestUnchangedUpdateWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	ctx := t.Context()
	if err := s.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"d/f.txt", "d/empty.txt"} {
		data := []byte("line one\nline two\n")
		if name == "d/empty.txt" {
			data = nil
		}
		if err := s.WriteFile(ctx, name, data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	var staged, synced atomic.Int32
	filestore.SetHooks(s, filestore.Hooks{Staged: func() { staged.Add(1) }, DirSync: func() { synced.Add(1) }})

	for _, c := range []struct {
		name, file string
		fn         func(old []byte) ([]byte, error)
	}{
		{"same slice", "d/f.txt", func(old []byte) ([]byte, error) { return old, nil }},
		{"equal copy", "d/f.txt", func(old []byte) ([]byte, error) { return bytes.Clone(old), nil }},
		{"edited back in place", "d/f.txt", func(old []byte) ([]byte, error) {
			old[0] = 'X' // fn changed what it was given, and returns that
			return old[:len(old):len(old)], nil
		}},
		{"empty stays empty", "d/empty.txt", func(old []byte) ([]byte, error) { return []byte{}, nil }},
	} {
		host := filepath.Join(dir, c.file)
		before := hostStat(t, host)
		staged.Store(0)
		synced.Store(0)
		err := s.Update(ctx, c.file, 1<<20, c.fn)
		if c.name == "edited back in place" {
			// Not unchanged at all: fn returned different bytes.
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := hostContent(t, host); got != "Xine one\nline two\n" {
				t.Errorf("%s: the file holds %q", c.name, got)
			}
			if err := s.WriteFile(ctx, c.file, []byte("line one\nline two\n"), memtool.Replace); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		after := hostStat(t, host)
		if after.Ino != before.Ino || after.Mtim != before.Mtim || after.Ctim != before.Ctim {
			t.Errorf("%s: the file was rewritten (inode %d -> %d, mtime %v -> %v)", c.name, before.Ino, after.Ino, before.Mtim, after.Mtim)
		}
		if n := staged.Load(); n != 0 {
			t.Errorf("%s: %d files staged", c.name, n)
		}
		if n := synced.Load(); n != 0 {
			t.Errorf("%s: %d directory fsyncs", c.name, n)
		}
	}
	if got := strings.Join(hostNames(t, filepath.Join(dir, "d")), " "); got != "empty.txt f.txt" {
		t.Errorf("d holds %q", got)
	}

	before := hostStat(t, filepath.Join(dir, "d/f.txt"))
	staged.Store(0)
	synced.Store(0)
	if err := s.Update(ctx, "d/f.txt", 1<<20, func(old []byte) ([]byte, error) { return append(old, "three\n"...), nil }); err != nil {
		t.Fatal(err)
	}
	if after := hostStat(t, filepath.Join(dir, "d/f.txt")); after.Ino == before.Ino {
		t.Errorf("a changing Update kept the inode: the checks above cannot see a rewrite")
	}
	if staged.Load() != 1 || synced.Load() != 1 {
		t.Errorf("a changing Update staged %d files and ran %d directory fsyncs, want 1 and 1", staged.Load(), synced.Load())
	}
}

// An Update writes its new content without the lock. If another writer
// changes the file meanwhile, the Update does not rename over that change:
// it runs fn again on the new content, under one hold of the lock; if the
// file went away, it fails as a read would and does not bring it back.
func TestUpdateConflict(t *testing.T) {
	for _, c := range []struct {
		name  string
		other func(ctx context.Context, o *filestore.Store) error
		want  string // "" for a file that must be gone
		calls int
	}{
		{"edited meanwhile", func(ctx context.Context, o *filestore.Store) error {
			return o.Update(ctx, "log", 100, func(old []byte) ([]byte, error) { return append(old, "B\n"...), nil })
		}, "0\nB\nA\n", 2},
		{"replaced meanwhile by the same bytes", func(ctx context.Context, o *filestore.Store) error {
			return o.WriteFile(ctx, "log", []byte("0\n"), memtool.Replace)
		}, "0\nA\n", 1},
		{"removed meanwhile", func(ctx context.Context, o *filestore.Store) error {
			return o.Remove(ctx, "log")
		}, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, other := open(t, dir, nil), open(t, dir, nil)
			ctx := t.Context()
			if err := s.WriteFile(ctx, "log", []byte("0\n"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			filestore.SetHooks(s, filestore.Hooks{Relock: func() {
				once.Do(func() {
					if err := c.other(ctx, other); err != nil {
						t.Error(err)
					}
				})
			}})
			calls := 0
			err := s.Update(ctx, "log", 100, func(old []byte) ([]byte, error) {
				calls++
				return append(old, "A\n"...), nil
			})
			if c.want == "" {
				storetest.WantErr(t, "Update of a file removed meanwhile", err, memtool.ErrNotExist)
				if _, err := os.Lstat(filepath.Join(dir, "log")); err == nil {
					t.Errorf("the Update brought the removed file back")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if got := hostContent(t, filepath.Join(dir, "log")); got != c.want {
					t.Errorf("log = %q, want %q", got, c.want)
				}
			}
			if calls != c.calls {
				t.Errorf("fn was called %d times, want %d", calls, c.calls)
			}
			if got := strings.Join(hostNames(t, dir), " "); got != ".memtool.lock" && got != ".memtool.lock log" {
				t.Errorf("the store holds %q", got)
			}
		})
	}
}

// Many writers of one process updating one file, through two handles,
// lose none of each other's appends (the retries of TestUpdateConflict,
// under load).
func TestConcurrentUpdatesOneFile(t *testing.T) {
	dir := t.TempDir()
	stores := []*filestore.Store{open(t, dir, nil), open(t, dir, nil)}
	ctx := t.Context()
	if err := stores[0].WriteFile(ctx, "log", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	writers, per := 16, 10
	if testing.Short() {
		per = 4
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			s := stores[w%2]
			for i := range per {
				line := fmt.Sprintf("w%d-%d\n", w, i)
				if err := s.Update(context.Background(), "log", 1<<20, func(old []byte) ([]byte, error) {
					return append(old, line...), nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(hostContent(t, filepath.Join(dir, "log")), "\n"), "\n")
	slices.Sort(lines)
	if n := len(slices.Compact(lines)); n != writers*per {
		t.Errorf("the log has %d distinct lines, want %d: updates were lost", n, writers*per)
	}
}

// Writers that rename into one directory while its fsync is under way
// share the next one: 8 writes, the first fsync held until all 8 wait,
// take at most 2 directory fsyncs, not 8.
func TestDirSyncShared(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	ctx := t.Context()
	const n = 8
	for i := range n {
		if err := s.WriteFile(ctx, fmt.Sprintf("f%d", i), []byte("0"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	release := make(chan struct{})
	waiting := make(chan struct{}, n)
	var syncs atomic.Int32
	filestore.SetHooks(s, filestore.Hooks{
		DirSync: func() {
			if syncs.Add(1) == 1 {
				<-release
			}
		},
		Waiting: func() { waiting <- struct{}{} },
	})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := s.WriteFile(ctx, fmt.Sprintf("f%d", i), []byte("1"), memtool.Replace); err != nil {
				t.Error(err)
			}
		})
	}
	for range n {
		<-waiting // renamed, and waiting for (or running) an fsync
	}
	close(release)
	wg.Wait()
	if got := syncs.Load(); got > 2 {
		t.Errorf("%d writes ran %d directory fsyncs, want at most 2", n, got)
	}
	for i := range n {
		if got := hostContent(t, filepath.Join(dir, fmt.Sprintf("f%d", i))); got != "1" {
			t.Errorf("f%d = %q", i, got)
		}
	}
}

var errRefused = errors.New("refused by fn")

// A write that saw another write's change (an Update reading it, a create
// finding the name taken, a rename finding its target) while that change's
// directory fsync is under way answers only once the fsync is done: within
// one process no answer rests on a change that a power loss could undo.
func TestAnswerWaitsForWhatItSaw(t *testing.T) {
	answerWaits(t, createAt("g"), "f", []sighting{
		{"unchanged Update", func(ctx context.Context, s *filestore.Store) error {
			return s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) {
				if string(old) != "new" {
					return nil, fmt.Errorf("read %q", old)
				}
				return old, nil
			})
		}, nil},
		{"failing Update", func(ctx context.Context, s *filestore.Store) error {
			return s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return nil, errRefused })
		}, errRefused},
		{"create of the name", createAt("f"), memtool.ErrExist},
		{"mkdir of the name", mkdirAt("f"), memtool.ErrExist},
		{"rename onto the name", func(ctx context.Context, s *filestore.Store) error {
			return s.Rename(ctx, "g", "f")
		}, memtool.ErrExist},
	})
}

// A write's content is staged without a name: while it waits for the lock
// nothing of it is in the tree, another store opening the directory (and
// sweeping it) cannot remove it, and the write then lands whole.
func TestStagedWriteInvisible(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	ctx := t.Context()
	if err := s.WriteFile(ctx, "f", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	before := strings.Join(hostNames(t, dir), " ")
	staged := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	filestore.SetHooks(s, filestore.Hooks{Staged: func() { once.Do(func() { close(staged); <-release }) }})
	done := make(chan error, 1)
	go func() {
		done <- s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return []byte("new"), nil })
	}()
	<-staged
	if got := strings.Join(hostNames(t, dir), " "); got != before {
		t.Errorf("a staged write shows in the directory: %q, before %q", got, before)
	}
	other := open(t, dir, nil)
	if err := other.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := hostContent(t, filepath.Join(dir, "f")); got != "new" {
		t.Errorf("f = %q", got)
	}
}

// A process killed while its write is staged leaves nothing behind: no
// temp file for a later Open to sweep, and no crash mark that would make
// it walk the tree.
func TestKilledWhileStaged(t *testing.T) {
	if s := childStore("FILESTORE_STAGED_CHILD"); s != nil {
		filestore.SetHooks(s, filestore.Hooks{Staged: func() {
			fmt.Println("staged")
			select {}
		}})
		s.WriteFile(context.Background(), "big", bytes.Repeat([]byte("x"), 1<<20), memtool.CreateOnly)
		os.Exit(1)
	}
	dir := t.TempDir()
	open(t, dir, nil)
	cmd, line, err := startChild(t, "TestKilledWhileStaged", "FILESTORE_STAGED_CHILD="+dir)
	cmd.Process.Kill()
	cmd.Wait()
	if line != "staged\n" {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	// It staged before taking the lock, so it made no lock file either
	// (nor did Open): nothing at all.
	if got := strings.Join(hostNames(t, dir), " "); got != "" {
		t.Errorf("the killed writer left %q", got)
	}
}

// A storeCall is one call of a store's method.
type storeCall func(ctx context.Context, s *filestore.Store) error

// createAt creates an empty file at name; mkdirAt a directory.
func createAt(name string) storeCall {
	return func(ctx context.Context, s *filestore.Store) error {
		return s.WriteFile(ctx, name, nil, memtool.CreateOnly)
	}
}

func mkdirAt(name string) storeCall {
	return func(ctx context.Context, s *filestore.Store) error { return s.Mkdir(ctx, name) }
}

// A sighting is a call that sees the change of a write (see answerWaits),
// and the error it must answer with.
type sighting struct {
	name string
	see  storeCall
	want error
}

// answerWaits checks, in a subtest for each sighting, that its call, run
// on a new store after prepare while the directory fsync of a create of
// name is held, answers only once that fsync is done, with its want.
func answerWaits(t *testing.T, prepare storeCall, name string, sightings []sighting) {
	for _, c := range sightings {
		t.Run(c.name, func(t *testing.T) { answerWaitsFor(t, prepare, name, c.see, c.want) })
	}
}

func answerWaitsFor(t *testing.T, prepare storeCall, name string, see storeCall, want error) {
	t.Helper()
	s := open(t, t.TempDir(), nil)
	ctx := t.Context()
	if err := prepare(ctx, s); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	blocked := make(chan struct{})
	waiting := make(chan struct{}, 2)
	var once sync.Once
	filestore.SetHooks(s, filestore.Hooks{
		DirSync: func() { once.Do(func() { close(blocked); <-release }) },
		Waiting: func() { waiting <- struct{}{} },
	})
	written := make(chan error, 1)
	go func() { written <- s.WriteFile(ctx, name, []byte("new"), memtool.CreateOnly) }()
	<-blocked
	<-waiting // the writer's own
	seen := make(chan error, 1)
	go func() { seen <- see(ctx, s) }()
	select {
	case <-waiting:
	case err := <-seen:
		t.Errorf("answered (%v) while the fsync of the write it saw was under way", err)
		seen <- err
	}
	close(release)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := <-seen; !errors.Is(err, want) {
		t.Errorf("got %v, want %v", err, want)
	}
}

// startChild runs the test binary again as a child that runs only the test
// named test, with env added to its environment, and returns it with the
// first line it printed (the point it reached; the caller kills it).
func startChild(t *testing.T, test, env string) (*exec.Cmd, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	return cmd, line, err
}

// childStore returns, in a child of startChild (its environment variable
// env names a directory), a store of that directory, and nil in the test
// itself. A child that cannot open it prints the error, which its parent
// reads as the point it reached, and exits.
func childStore(env string) *filestore.Store {
	dir := os.Getenv(env)
	if dir == "" {
		return nil
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	return s
}
