package history_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// A shared backend, opened twice as two processes would open it: each
// process gets its own history wrapper (and its own lock), and nothing but
// the stored data is shared.
type shared struct {
	name string
	// open returns two stores over the same data.
	open func(t *testing.T) (memtool.Store, memtool.Store)
	// work scales the loops of a test: the file store fsyncs every write.
	work int
}

var sharedBackends = []shared{
	{"memstore", func(t *testing.T) (memtool.Store, memtool.Store) {
		s := memstore.New()
		return s, s
	}, 4},
	{"filestore", func(t *testing.T) (memtool.Store, memtool.Store) {
		dir := filepath.Join(t.TempDir(), "memories")
		return openFileStore(t, dir), openFileStore(t, dir)
	}, 1},
	{"encrypt", openEncrypted, 4},
	// Without the inner store's rename: the wrapper's scheme without one
	// (tombstones).
	{"norename", func(t *testing.T) (memtool.Store, memtool.Store) {
		s := noRename{memstore.New()}
		return s, s
	}, 4},
}

// noRename is a store with RemoveAll but no Rename.
type noRename struct{ memtool.Store }

func (s noRename) RemoveAll(ctx context.Context, name string) error {
	return memtool.ForwardRemoveAll(ctx, s.Store, name)
}

// openEncrypted returns two encrypting stores over one memstore, with the
// same key.
func openEncrypted(t *testing.T) (memtool.Store, memtool.Store) {
	key, err := encrypt.NewKey("")
	if err != nil {
		t.Fatal(err)
	}
	s := memstore.New()
	a, err := encrypt.New(s, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encrypt.New(s, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func openFileStore(t *testing.T, dir string) *filestore.Store {
	t.Helper()
	fs, err := filestore.Open(dir, nil)
	return storetest.Opened(t, fs, err)
}

// eachShared runs test on every shared backend, with two wrappers over it
// as two processes have: a over inner, and b over the backend's other
// opening. work scales the test's loops.
func eachShared(t *testing.T, opts *history.Options, test func(t *testing.T, a, b, inner memtool.Store, work int)) {
	for _, sb := range sharedBackends {
		t.Run(sb.name, func(t *testing.T) {
			innerA, innerB := sb.open(t)
			test(t, history.New(innerA, opts), history.New(innerB, opts), innerA, sb.work)
		})
	}
}

// keepAll keeps every version for the tests that count them all.
var keepAll = &history.Options{MaxVersions: 1 << 20, MaxAge: -1}

// appendToken is an edit that appends tok: the file's content then spells
// out, token by token, the order in which the edits took effect.
func appendToken(tok string) func([]byte) ([]byte, error) {
	return func(old []byte) ([]byte, error) { return append(slices.Clip(old), tok...), nil }
}

var tokenRE = regexp.MustCompile(`<[a-z]?\d+>`)

// replaced is every content that the edits recorded in final put in place
// and then replaced: start, and start followed by each proper prefix of
// final's tokens.
func replaced(start, final string) []string {
	out := []string{start}
	text := start
	toks := tokenRE.FindAllString(strings.TrimPrefix(final, start), -1)
	for _, tok := range toks[:max(0, len(toks)-1)] {
		text += tok
		out = append(out, text)
	}
	return out
}

// kept returns the contents of the kept versions of name, in version order,
// and how many version numbers are not unique.
func kept(t *testing.T, inner memtool.Store, name string) (texts []string, dupNumbers int) {
	t.Helper()
	ctx := context.Background()
	vs, err := history.Versions(ctx, inner, memtool.VirtualPath(name))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, v := range vs {
		if seen[v.N] {
			dupNumbers++
		}
		seen[v.N] = true
		data, err := history.Read(ctx, inner, memtool.VirtualPath(name), v.N)
		if err != nil {
			t.Fatalf("version %d: %v", v.N, err)
		}
		texts = append(texts, string(data))
	}
	return texts, dupNumbers
}

// editUntilGone appends tokens to name through s until the file is gone
// (or n edits were made), and returns the tokens of the edits that were
// acknowledged. started is closed after the first attempt.
func editUntilGone(t *testing.T, s memtool.Store, name, prefix string, n int, started chan<- struct{}) []string {
	ctx := context.Background()
	var acked []string
	for j := range n {
		tok := fmt.Sprintf("<%s%d>", prefix, j)
		err := s.Update(ctx, name, 1<<20, appendToken(tok))
		if j == 0 && started != nil {
			close(started)
		}
		if errors.Is(err, memtool.ErrNotExist) {
			return acked
		}
		if acknowledged(t, "edit "+tok, err) {
			acked = append(acked, tok)
		}
	}
	return acked
}

// acknowledged reports whether a change that returned err took effect. One
// that reports the store busy did not, and changed nothing; any other
// error fails the test.
func acknowledged(t *testing.T, change string, err error) bool {
	if err != nil && !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("%s: %v", change, err)
	}
	return err == nil
}

// deleteWhileEditing creates name, in a new directory, and deletes it (with
// how: Remove, or RemoveAll of the directory) through deleter while editor
// keeps editing it. It returns the last content the edits put in place.
func deleteWhileEditing(t *testing.T, deleter, editor, inner memtool.Store, how, name string) string {
	t.Helper()
	ctx := context.Background()
	dir := path.Dir(name)
	if err := deleter.Mkdir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := deleter.WriteFile(ctx, name, []byte("start"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var acked []string
	var wg sync.WaitGroup
	wg.Go(func() { acked = editUntilGone(t, editor, name, "", 1000, started) })
	<-started
	var err error
	if how == "Remove" {
		err = deleter.Remove(ctx, name)
	} else {
		err = deleter.(memtool.RemoveAller).RemoveAll(ctx, dir)
	}
	wg.Wait()
	if err != nil {
		t.Fatalf("%s %s: %v", how, name, err)
	}
	if _, err := inner.Stat(ctx, name); !errors.Is(err, memtool.ErrNotExist) {
		t.Fatalf("after %s %s: %v", how, name, err)
	}
	return "start" + strings.Join(acked, "")
}

// TestDeleteRacingEdits: one process deletes a file (or its directory)
// while another keeps editing it. Every content that an edit put in place
// is kept as a version once it is deleted, above all the last one.
func TestDeleteRacingEdits(t *testing.T) {
	eachShared(t, keepAll, func(t *testing.T, deleter, editor, inner memtool.Store, work int) {
		for _, how := range []string{"Remove", "RemoveAll"} {
			t.Run(how, func(t *testing.T) {
				rounds := 10 * work
				lostLast, missing, contents, dups := 0, 0, 0, 0
				for i := range rounds {
					name := fmt.Sprintf("%s%d/f", how, i)
					last := deleteWhileEditing(t, deleter, editor, inner, how, name)
					texts, d := kept(t, inner, name)
					dups += d
					if !slices.Contains(texts, last) {
						lostLast++
					}
					for _, want := range append(replaced("start", last), last) {
						contents++
						if !slices.Contains(texts, want) {
							missing++
						}
					}
				}
				msg := fmt.Sprintf("%d of %d rounds lost the last content; %d of %d contents missing; %d duplicate version numbers", lostLast, rounds, missing, contents, dups)
				if lostLast > 0 || missing > 0 || dups > 0 {
					t.Error(msg)
				} else {
					t.Log(msg)
				}
			})
		}
	})
}

// TestDeleteRacingEditsPruned: as TestDeleteRacingEdits, keeping one
// version: it is the last content, since a delete's version is numbered
// after every change that took effect before it.
func TestDeleteRacingEditsPruned(t *testing.T) {
	eachShared(t, &history.Options{MaxVersions: 1}, func(t *testing.T, deleter, editor, inner memtool.Store, work int) {
		for _, how := range []string{"Remove", "RemoveAll"} {
			wrong := 0
			for i := range 10 * work {
				name := fmt.Sprintf("%s%d/f", how, i)
				last := deleteWhileEditing(t, deleter, editor, inner, how, name)
				if texts, _ := kept(t, inner, name); !slices.Equal(texts, []string{last}) {
					wrong++
				}
			}
			if wrong > 0 {
				t.Errorf("%s: %d of %d rounds kept another version than the last content", how, wrong, 10*work)
			}
		}
	})
}

// editConcurrently runs n appending edits of name through each of a and b
// at once, and returns the file's final content after checking that every
// acknowledged edit is in it.
func editConcurrently(t *testing.T, a, b memtool.Store, name string, n int) string {
	t.Helper()
	ctx := context.Background()
	var ackA, ackB []string
	var wg sync.WaitGroup
	wg.Go(func() { ackA = editUntilGone(t, a, name, "a", n, nil) })
	wg.Go(func() { ackB = editUntilGone(t, b, name, "b", n, nil) })
	wg.Wait()
	final, err := a.ReadFile(ctx, name, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range append(ackA, ackB...) {
		if strings.Count(string(final), tok) != 1 {
			t.Errorf("acknowledged edit %s is not in the file once", tok)
		}
	}
	return string(final)
}

// changeMixed makes n changes of name through s, alternately an appending
// edit and a whole-file write of a new text, and returns every content
// that one of them put in place.
func changeMixed(t *testing.T, s memtool.Store, name, prefix string, n int) []string {
	ctx := context.Background()
	var acked []string
	for j := range n {
		tok := fmt.Sprintf("<%s%d>", prefix, j)
		var err error
		var result []byte
		if j%2 == 0 {
			err = s.Update(ctx, name, 1<<20, func(old []byte) ([]byte, error) {
				result = append(slices.Clip(old), tok...) // the last call is the one that took effect
				return result, nil
			})
		} else {
			result = []byte("w" + tok)
			err = s.WriteFile(ctx, name, result, memtool.Replace)
		}
		if acknowledged(t, "change "+tok, err) {
			acked = append(acked, string(result))
		}
	}
	return acked
}

// TestConcurrentEdits: two processes edit and overwrite one file at once.
// Every version has its own number, and every content that was put in
// place and then replaced is kept, once.
func TestConcurrentEdits(t *testing.T) {
	eachShared(t, keepAll, func(t *testing.T, a, e, inner memtool.Store, work int) {
		ctx := context.Background()
		if err := a.WriteFile(ctx, "f", []byte("start"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		var ackA, ackB []string
		var wg sync.WaitGroup
		wg.Go(func() { ackA = changeMixed(t, a, "f", "a", 25*work) })
		wg.Go(func() { ackB = changeMixed(t, e, "f", "b", 25*work) })
		wg.Wait()
		final, err := a.ReadFile(ctx, "f", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		texts, dups := kept(t, inner, "f")
		var want []string
		for _, c := range append(append([]string{"start"}, ackA...), ackB...) {
			if c != string(final) {
				want = append(want, c)
			}
		}
		missing := 0
		for _, w := range want {
			if !slices.Contains(texts, w) {
				missing++
			}
		}
		if dups > 0 || missing > 0 || len(texts) != len(want) {
			t.Errorf("%d versions, want %d; %d duplicate numbers; %d of %d replaced contents missing", len(texts), len(want), dups, missing, len(want))
		} else {
			t.Logf("%d versions, all replaced contents, unique numbers", len(texts))
		}
	})
}

// TestConcurrentPrune: two processes edit one file at once, each pruning
// after its changes. What is left is exactly the newest MaxVersions
// replaced contents, in order.
func TestConcurrentPrune(t *testing.T) {
	eachShared(t, &history.Options{MaxVersions: 3}, func(t *testing.T, a, e, inner memtool.Store, work int) {
		ctx := context.Background()
		if err := a.WriteFile(ctx, "f", []byte("start"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		final := editConcurrently(t, a, e, "f", 25*work)
		texts, dups := kept(t, inner, "f")
		all := replaced("start", final)
		want := all[max(0, len(all)-3):]
		if dups > 0 || !slices.Equal(texts, want) {
			t.Errorf("kept %q (%d duplicate numbers)\nwant the newest 3: %q", texts, dups, want)
		}
	})
}

// TestWritesRacingDeletes: one process overwrites a file again and again
// (creating it when it is gone) while another deletes it again and again.
// Every content that a write put in place and that is no longer there is
// kept.
func TestWritesRacingDeletes(t *testing.T) {
	eachShared(t, keepAll, func(t *testing.T, writer, deleter, inner memtool.Store, work int) {
		ctx := context.Background()
		var acked []string
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			defer close(stop)
			for j := range 25 * work {
				text := fmt.Sprintf("<w%d>", j)
				err := writer.WriteFile(ctx, "f", []byte(text), memtool.Replace)
				if acknowledged(t, "write "+text, err) {
					acked = append(acked, text)
				}
			}
		})
		wg.Go(func() {
			for n := 0; n < 1000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := deleter.Remove(ctx, "f"); err != nil && !errors.Is(err, memtool.ErrNotExist) {
					t.Errorf("remove: %v", err)
				}
			}
		})
		wg.Wait()
		final, _ := inner.ReadFile(ctx, "f", 1<<20)
		texts, dups := kept(t, inner, "f")
		missing := 0
		for _, text := range acked {
			if text != string(final) && !slices.Contains(texts, text) {
				missing++
			}
		}
		if missing > 0 || dups > 0 {
			t.Errorf("%d of %d written contents missing; %d duplicate version numbers", missing, len(acked), dups)
		} else {
			t.Logf("%d writes, %d versions, none missing", len(acked), len(texts))
		}
	})
}

// interfering is a store on which another process edits every file just
// before each Update of it: a history wrapper on it never finds the
// content it saved.
type interfering struct{ memtool.Store }

func (s interfering) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	if !strings.HasPrefix(name, ".memtool-history") {
		if err := s.Store.Update(ctx, name, limit, appendToken("<x>")); err != nil {
			return err
		}
	}
	return s.Store.Update(ctx, name, limit, fn)
}

// TestStartsOverBounded: an edit that finds the file changed every time
// gives up with ErrBusy, and keeps nothing.
func TestStartsOverBounded(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	if err := inner.WriteFile(ctx, "f", []byte("start"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := history.New(interfering{inner}, nil)
	err := s.Update(ctx, "f", 1<<20, appendToken("<1>"))
	if !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("Update: %v, want ErrBusy", err)
	}
	err = s.WriteFile(ctx, "f", []byte("new"), memtool.Replace)
	if !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("WriteFile: %v, want ErrBusy", err)
	}
	if texts, _ := kept(t, inner, "f"); len(texts) != 0 {
		t.Errorf("kept %q", texts)
	}
	if data, _ := inner.ReadFile(ctx, "f", 1<<20); strings.Contains(string(data), "<1>") || strings.Contains(string(data), "new") {
		t.Errorf("the file: %q", data)
	}
}
