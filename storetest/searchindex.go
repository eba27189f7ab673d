package storetest

// The consistency of a search index: what a store's tests check after
// writers racing and writers killed.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
)

// CheckSearchIndex checks that memtool.Search finds on s, whatever it
// holds, the lines a scan of s finds, for queries that an index looks
// up: a store's tests call it where the index may have fallen behind its
// files (after a crash, or writers racing). It fails if the scan finds
// none of queries, or if no search asked the index (SearchFiles
// answered ErrUnsupported, or was never called): then nothing was
// compared.
func CheckSearchIndex(t *testing.T, s memtool.Store, queries ...string) {
	t.Helper()
	if !memtool.Has[memtool.Searcher](s) {
		t.Fatalf("%T has no search index", s)
	}
	found := false
	asked := &askedIndex{Store: s}
	for _, query := range queries {
		for _, cs := range []bool{false, true} {
			q := memtool.SearchQuery{Query: query, CaseSensitive: cs, Limit: memtool.MaxSearchLimit}
			got, err := memtool.Search(t.Context(), s, q, noLimit)
			if err != nil {
				t.Fatalf("Search(%+v): %v", q, err)
			}
			want, err := memtool.Search(t.Context(), scanOnly{s}, q, noLimit)
			if err != nil {
				t.Fatalf("scan(%+v): %v", q, err)
			}
			if !equalResults(got, want) {
				t.Errorf("Search(%+v) with the index:\n got %s\nwant (scan) %s", q, formatResult(got), formatResult(want))
			}
			found = found || want.Total > 0
			// The same search again, through a store that counts the
			// index's answers: Search on s must have asked it.
			if again, err := memtool.Search(t.Context(), asked, q, noLimit); err != nil || !equalResults(again, want) {
				t.Errorf("Search(%+v) with the index, again:\n got %s, %v\nwant (scan) %s", q, formatResult(again), err, formatResult(want))
			}
		}
	}
	if !found {
		t.Errorf("the scan of %T finds none of %q: nothing to compare the index with (were the files written?)", s, queries)
	}
	if asked.answers == 0 {
		t.Errorf("%T's index answered none of the searches for %q (SearchFiles: %v): the index was not checked", s, queries, asked.err)
	}
}

// askedIndex is a store whose index counts the searches it answers
// (those that are not ErrUnsupported).
type askedIndex struct {
	memtool.Store
	answers int
	err     error
}

func (a *askedIndex) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(name string, data []byte) error) error {
	err := memtool.ForwardSearchFiles(ctx, a.Store, dir, q, fn)
	if errors.Is(err, errors.ErrUnsupported) {
		a.err = err
	} else {
		a.answers++
	}
	return err
}

// scanOnly is a store without its search index.
type scanOnly struct{ memtool.Store }

// ChurnQueries are queries for CheckSearchIndex after Churn: words Churn
// writes, in both cases.
var ChurnQueries = []string{"quokka", "WOMBAT", "numbat tail", "platypus", "Echidna", "line 1"}

// Churn changes s at random, from seed, until ctx ends or a change fails
// for a reason other than the race it may lose to another Churn (a name
// taken or gone): files created, replaced, edited, renamed and removed,
// directories renamed and removed, with text of a few words. Stores' index
// consistency tests run it in several goroutines or processes, and
// interrupt it, then call CheckSearchIndex with ChurnQueries. Its first
// change writes the file kept.md, which holds every one of ChurnQueries
// and which it never changes again: a store it changed holds something
// for CheckSearchIndex to find.
func Churn(ctx context.Context, s memtool.Store, seed uint64) error {
	return churn(ctx, s, seed, func() {})
}

// churn is Churn, calling changed after each change made.
func churn(ctx context.Context, s memtool.Store, seed uint64, changed func()) error {
	if err := s.WriteFile(ctx, "kept.md", []byte("line 1: the kept file\n"+strings.Join(ChurnQueries, "\n")+"\n"), memtool.Replace); err != nil {
		return err
	}
	changed()
	rng := rand.New(rand.NewPCG(seed, seed))
	words := []string{"quokka", "wombat", "numbat", "tail", "platypus", "echidna", "Quokka", "WOMBAT", "Numbat Tail", "line"}
	text := func() []byte {
		var b strings.Builder
		for i := range 1 + rng.IntN(20) {
			fmt.Fprintf(&b, "line %d:", i+1)
			for range rng.IntN(6) {
				b.WriteString(" " + words[rng.IntN(len(words))])
			}
			b.WriteString("\n")
		}
		return []byte(b.String())
	}
	dir := func() string { return fmt.Sprintf("d%d", rng.IntN(4)) }
	file := func() string { return fmt.Sprintf("%s/f%d.md", dir(), rng.IntN(8)) }
	for ctx.Err() == nil {
		var err error
		switch rng.IntN(8) {
		case 0, 1:
			d := dir()
			if err = s.Mkdir(ctx, d); errors.Is(err, memtool.ErrExist) {
				err = nil
			}
			if err == nil {
				err = s.WriteFile(ctx, fmt.Sprintf("%s/f%d.md", d, rng.IntN(8)), text(), memtool.Replace)
			}
		case 2:
			err = s.WriteFile(ctx, file(), text(), memtool.CreateOnly)
		case 3, 4:
			more := text()
			err = s.Update(ctx, file(), 1<<20, func(old []byte) ([]byte, error) { return append(old, more...), nil })
		case 5:
			err = memtool.Move(ctx, s, file(), file(), 1<<20)
		case 6:
			err = s.Remove(ctx, file())
		case 7:
			if rng.IntN(2) == 0 {
				err = memtool.Move(ctx, s, dir(), dir(), 1<<20)
			} else {
				err = memtool.RemoveAll(ctx, s, dir())
			}
		}
		switch {
		case ctx.Err() != nil:
		case err == nil:
			changed()
		case errors.Is(err, memtool.ErrExist), errors.Is(err, memtool.ErrNotExist), errors.Is(err, memtool.ErrNotDir),
			errors.Is(err, memtool.ErrIsDir), errors.Is(err, memtool.ErrNotEmpty), errors.Is(err, fs.ErrInvalid):
		default:
			return err
		}
	}
	return nil
}

// ChurnTogether runs Churn in two goroutines on each of stores (handles
// on one memory, as processes sharing it have) for d, and fails t if one
// fails.
func ChurnTogether(t *testing.T, d time.Duration, stores ...memtool.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	errs := make(chan error, 2*len(stores))
	var fns []func()
	for i := range 2 * len(stores) {
		fns = append(fns, func() { errs <- Churn(ctx, stores[i%len(stores)], uint64(i)) })
	}
	Together(fns...)
	for range fns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// ChurnKilled runs Churn on target in another process and kills it
// (SIGKILL) in the middle of its writes, after some of them (from 1 to
// 30), rounds times, calling check after each kill. The other process is
// this test binary running the calling test again with $env set to
// target: the test calls ChurnKilled first thing, and in that process
// ChurnKilled opens target with open and churns until it is killed. A
// writer that ends by itself (Churn failed) fails the test.
func ChurnKilled(t *testing.T, env, target string, open func(target string) (memtool.Store, error), rounds int, check func(t *testing.T)) {
	if v := os.Getenv(env); v != "" {
		s, err := open(v)
		if err != nil {
			t.Fatal(err)
		}
		t.Fatal(churn(context.Background(), s, uint64(time.Now().UnixNano()), func() { os.Stdout.WriteString(churnChanged + "\n") }))
	}
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
		cmd.Env = append(os.Environ(), env+"="+target)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		var seen strings.Builder
		for changes := 1 + rand.IntN(30); changes > 0; {
			line, err := out.ReadString('\n')
			if err != nil {
				break // the writer ended: reported below
			}
			if strings.TrimSpace(line) == churnChanged {
				changes--
			} else {
				seen.WriteString(line)
			}
		}
		time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
		cmd.Process.Kill()
		rest, _ := io.ReadAll(out)
		cmd.Wait()
		if cmd.ProcessState.Exited() {
			t.Fatalf("round %d: the writer ended before it was killed (%v):\n%s%s", round, cmd.ProcessState, seen.String(), rest)
		}
		t.Run(fmt.Sprintf("round%d", round), check)
	}
}

// churnChanged is the line a writer of ChurnKilled writes after each
// change.
const churnChanged = "memtool-churn: changed"
