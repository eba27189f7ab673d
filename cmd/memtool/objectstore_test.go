package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
)

// These tests run the object store (package objectstore) through the real
// memtool binary, as stores_test.go runs the databases: over gocloud's
// directory driver (file+blob://), and over a real S3 protocol
// conversation — the AWS SDK v2 client in each memtool process against an
// S3-compatible server (package s3test) in the test process.

// s3URL is the URL of a new bucket on an in-process S3 server (see
// backendtest.S3URL; TestMain sets the credentials for the whole process).
func s3URL(t *testing.T, prefix string) string { return backendtest.S3URL(t, prefix) }

// TestConcurrentEditsOnS3 runs the edit plan of
// TestConcurrentEditsAcrossProcesses with 4 memtool exec processes on one
// S3 bucket: nothing but S3's If-Match keeps them from losing updates.
func TestConcurrentEditsOnS3(t *testing.T) {
	t.Parallel()
	plan := editPlan{writers: 4, ops: 40}
	if testing.Short() {
		plan.ops = 16
	}
	url := s3URL(t, "")
	concurrentEdits(t, plan, url, "u1")
}

// TestRacingOnS3 races 4 processes creating one file, and 4 renaming their
// own files onto one name, on one S3 bucket: exactly one wins each race
// (If-None-Match: *), and the bucket holds what the winner wrote.
func TestRacingOnS3(t *testing.T) {
	t.Parallel()
	checkRaces(t, s3URL(t, ""), false)
}

// eachRenameRace runs race as a subtest with 2 and with 4 memtool
// processes (one renamer, and one or three others), each time on a new S3
// bucket at url.
func eachRenameRace(t *testing.T, race func(t *testing.T, procs int, url string)) {
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d processes", procs), func(t *testing.T) { race(t, procs, s3URL(t, "")) })
	}
}

// startChildren starts n memtool exec processes on the store at url, all
// at once, and waits until each has opened it.
func startChildren(t *testing.T, url string, n int) []*child {
	t.Helper()
	children := make([]*child, n)
	for i := range children {
		children[i] = startChild(t, "--store", url)
	}
	for _, c := range children {
		if _, err := c.ask(jsonLine(map[string]any{"command": "view", "path": "/memories"})); err != nil {
			t.Fatal(err)
		}
	}
	return children
}

// askAnswer sends one input to c and decodes its answer.
func askAnswer(c *child, input map[string]any) (answer, error) {
	out, err := c.ask(jsonLine(input))
	if err != nil {
		return answer{}, err
	}
	var a answer
	err = json.Unmarshal([]byte(out), &a)
	return a, err
}

// TestRenameRacingEditsOnS3 races one process renaming a file back and
// forth between old/x.txt and new/x.txt against processes inserting lines
// into it (at whichever name they find it), on one S3 bucket. Every
// acknowledged insert must be in the file at the end, once, and the file
// at one name: a rename must not delete a source that was edited after it
// copied it, nor let an edit land on both names.
func TestRenameRacingEditsOnS3(t *testing.T) {
	t.Parallel()
	paths := [2]string{"/memories/old/x.txt", "/memories/new/x.txt"}
	renames, edits := 24, 24
	if testing.Short() {
		renames, edits = 10, 10
	}
	eachRenameRace(t, func(t *testing.T, procs int, url string) {
		execMemtool(t, jsonLine(createInput(paths[0], "BEGIN\nEND")), "--store", url)
		children := startChildren(t, url, procs)
		editors := procs - 1
		acked := newAcked(editors, edits)
		errs := make([]error, procs)
		var wg sync.WaitGroup
		moved := 0
		wg.Go(func() {
			at := 0
			for range renames {
				a, err := askAnswer(children[editors], renameInput(paths[at], paths[1-at]))
				if err != nil {
					errs[editors] = err
					return
				}
				if a.IsError {
					// A rename may give up on a file that keeps changing;
					// it must say so and change nothing.
					t.Logf("rename %s: %s", paths[at], a.Text())
					continue
				}
				at, moved = 1-at, moved+1
			}
		})
		for w := range editors {
			wg.Go(func() {
				for j := range edits {
					for _, p := range paths {
						a, err := askAnswer(children[w], map[string]any{"command": "insert", "path": p, "insert_line": 1, "insert_text": fmt.Sprintf("<ins %d.%d>", w, j)})
						if err != nil {
							errs[w] = err
							return
						}
						if !a.IsError {
							acked[w][j] = true
							break
						}
						// Missing at this name, or the copy of a rename
						// that has not finished: not made, try the other.
						if !strings.Contains(a.Text(), "does not exist") && !strings.Contains(a.Text(), "rename that has not finished") {
							errs[w] = fmt.Errorf("insert %d.%d into %s: %s", w, j, p, a.Text())
							return
						}
					}
				}
			})
		}
		wg.Wait()
		for _, c := range children {
			c.stop(t)
		}
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		store := openTestStore(t, url, "")
		var text string
		found := 0
		for _, p := range paths {
			data, err := store.ReadFile(context.Background(), strings.TrimPrefix(p, "/memories/"), 1<<20)
			if err == nil {
				text, found = string(data), found+1
			} else if !errors.Is(err, memtool.ErrNotExist) {
				t.Fatal(err)
			}
		}
		if found != 1 {
			t.Fatalf("the file is at %d of the two names, want 1", found)
		}
		n, lost := 0, 0
		for w := range editors {
			for j := range edits {
				mark := fmt.Sprintf("<ins %d.%d>", w, j)
				got := strings.Count(text, mark)
				if acked[w][j] {
					n++
					if got == 0 {
						lost++
					}
				}
				if want := map[bool]int{true: 1, false: 0}[acked[w][j]]; got != want {
					t.Errorf("insert %d.%d (acknowledged: %v) is in the file %d times", w, j, acked[w][j], got)
				}
			}
		}
		t.Logf("%d processes: %d of %d renames done; %d of %d acknowledged inserts lost", procs, moved, renames, lost, n)
	})
}

// dirRace is a chain of directory renames, /memories/d0 → d1 → d2 …, with
// creates racing into the directory being renamed and into the one it is
// being renamed to.
type dirRace struct {
	mu       sync.Mutex
	cur, dst int // the directory that holds the tree, the one it is moving to
}

const dirRaceSources = 4

func (*dirRace) dir(i int) string { return fmt.Sprintf("/memories/d%d", i) }

// source is the name and text of source file k, one of them in a
// subdirectory.
func (r *dirRace) source(k int) (string, string) {
	if k == dirRaceSources-1 {
		return fmt.Sprintf("sub/f%d.txt", k), fmt.Sprintf("source %d", k)
	}
	return fmt.Sprintf("f%d.txt", k), fmt.Sprintf("source %d", k)
}

func (r *dirRace) dirs() (cur, dst int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur, r.dst
}

// TestRenameRacingCreatesOnS3 races one process renaming a directory
// along a chain of names against processes creating files in it: a new
// name in the directory being renamed, and the name of one of its files in
// the directory it is being renamed to. Every acknowledged create must be
// in the store at the end, once, with its text, and so must every source
// file; nothing a refused create wrote may be left; every directory must
// be whole (listed, and its files readable).
func TestRenameRacingCreatesOnS3(t *testing.T) {
	t.Parallel()
	renames, creates := 12, 12
	if testing.Short() {
		renames, creates = 6, 6
	}
	eachRenameRace(t, func(t *testing.T, procs int, url string) {
		r := &dirRace{dst: 1}
		var setup strings.Builder
		for k := range dirRaceSources {
			name, text := r.source(k)
			setup.WriteString(jsonLine(createInput(r.dir(0)+"/"+name, text)))
		}
		for _, a := range decodeLines(t, execMemtool(t, setup.String(), "--store", url)) {
			if a[0].IsError {
				t.Fatal(a[0].Text())
			}
		}
		children := startChildren(t, url, procs)
		creators := procs - 1
		// want maps each text the store must hold to its file's base name.
		want := map[string]string{}
		for k := range dirRaceSources {
			name, text := r.source(k)
			want[text] = path.Base(name)
		}
		var wantMu sync.Mutex
		refused, moved := 0, 0
		errs := make([]error, procs)
		var wg sync.WaitGroup
		wg.Go(func() {
			for range renames {
				cur, dst := r.dirs()
				a, err := askAnswer(children[creators], renameInput(r.dir(cur), r.dir(dst)))
				if err != nil {
					errs[creators] = err
					return
				}
				r.mu.Lock()
				if !a.IsError {
					r.cur = dst
					moved++
				}
				r.dst++ // a failed rename's destination may exist now
				r.mu.Unlock()
				if a.IsError && a.Text() != "Error: The destination "+r.dir(dst)+" already exists" {
					t.Logf("rename %s → %s: %s", r.dir(cur), r.dir(dst), a.Text())
				}
			}
		})
		for w := range creators {
			wg.Go(func() {
				for j := range creates {
					cur, dst := r.dirs()
					src, _ := r.source(j % dirRaceSources)
					for _, c := range []struct{ p, text string }{
						{fmt.Sprintf("%s/c%d-%d.txt", r.dir(cur), w, j), fmt.Sprintf("create %d.%d", w, j)},
						{r.dir(dst) + "/" + src, fmt.Sprintf("create %d.%d over %s", w, j, src)},
					} {
						a, err := askAnswer(children[w], createInput(c.p, c.text))
						if err != nil {
							errs[w] = err
							return
						}
						wantMu.Lock()
						if a.IsError {
							refused++
						} else {
							want[c.text] = path.Base(c.p)
						}
						wantMu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		for _, c := range children {
			c.stop(t)
		}
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{} // text → the names holding it
		walkStore(t, openTestStore(t, url, ""), "", func(name string, data []byte) {
			got[string(data)] = append(got[string(data)], name)
		})
		lost, extra := 0, 0
		for text, base := range want {
			names := got[text]
			if len(names) == 0 {
				lost++
				t.Errorf("%q was acknowledged but is not in the store", text)
			}
			if len(names) > 1 || len(names) == 1 && path.Base(names[0]) != base {
				t.Errorf("%q is at %q, want one file named %s", text, names, base)
			}
		}
		for text, names := range got {
			if _, ok := want[text]; !ok {
				extra++
				t.Errorf("%q at %q was never acknowledged", text, names)
			}
		}
		t.Logf("%d processes: %d of %d renames done; %d acknowledged files (%d sources), %d refused creates; %d lost, %d unacknowledged present", procs, moved, renames, len(want), dirRaceSources, refused, lost, extra)
	})
}

// TestRacingDirRenamesOnS3 races 4 processes renaming their own
// directories onto one name on one S3 bucket: exactly one wins, its files
// are in the destination, and every loser's directory is whole.
func TestRacingDirRenamesOnS3(t *testing.T) {
	t.Parallel()
	url := s3URL(t, "")
	store := openTestStore(t, url, "")
	for round := range min(raceRounds(), 4) {
		src := func(i int) string { return fmt.Sprintf("/memories/q%d/s%d", round, i) }
		dst := fmt.Sprintf("/memories/q%d/to", round)
		var setup strings.Builder
		lines := make([]string, racers)
		for i := range racers {
			setup.WriteString(jsonLine(createInput(src(i)+"/a.txt", fmt.Sprintf("a of %d", i))))
			setup.WriteString(jsonLine(createInput(src(i)+"/sub/b.txt", fmt.Sprintf("b of %d", i))))
			lines[i] = jsonLine(renameInput(src(i), dst))
		}
		for _, a := range decodeLines(t, execMemtool(t, setup.String(), "--store", url)) {
			if a[0].IsError {
				t.Fatal(a[0].Text())
			}
		}
		answers := raceProcesses(t, url, lines)
		winner := -1
		for i, a := range answers {
			switch {
			case !a.IsError && a.Text() == "Successfully renamed "+src(i)+" to "+dst:
				if winner >= 0 {
					t.Errorf("round %d: renames %d and %d both won", round, winner, i)
				}
				winner = i
			case a.IsError && a.Text() == "Error: The destination "+dst+" already exists":
			default:
				t.Errorf("round %d: rename %d answered %s", round, i, a.Content)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no rename won", round)
		}
		for i := range racers {
			at := strings.TrimPrefix(src(i), "/memories/")
			if i == winner {
				at = strings.TrimPrefix(dst, "/memories/")
			}
			var got []string
			walkStore(t, store, at, func(name string, data []byte) {
				got = append(got, fmt.Sprintf("%s %q", strings.TrimPrefix(name, at+"/"), data))
			})
			if want := []string{fmt.Sprintf("a.txt \"a of %d\"", i), fmt.Sprintf("sub/b.txt \"b of %d\"", i)}; !slices.Equal(got, want) {
				t.Errorf("round %d: %s holds %q, want %q", round, at, got, want)
			}
		}
		if got := storeNames(t, store, fmt.Sprintf("q%d", round)); len(got) != racers {
			t.Errorf("round %d: q%d holds %q, want the %d directories", round, round, got, racers)
		}
	}
}

// walkStore calls fn for every file under dir in s, in name order, and
// fails t for any directory it cannot list or file it cannot read: each
// must be reachable by listing from the root.
func walkStore(t *testing.T, s memtool.Store, dir string, fn func(name string, data []byte)) {
	t.Helper()
	entries, err := s.ReadDir(context.Background(), dir)
	if err != nil {
		t.Errorf("listing %q: %v", dir, err)
		return
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name)
		if e.IsDir() {
			walkStore(t, s, name, fn)
			continue
		}
		data, err := s.ReadFile(context.Background(), name, 1<<20)
		if err != nil {
			t.Errorf("reading %q: %v", name, err)
			continue
		}
		fn(name, data)
	}
}
