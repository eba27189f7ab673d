package expiry_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/childproc"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/storeurl"
)

// slowRecord is a store whose first Update of the access index, once
// armed, says so on reached and waits for release: a process recording a
// use that the scheduler holds up.
type slowRecord struct {
	memtool.Store
	armed            atomic.Bool
	reached, release chan struct{}
}

func (s *slowRecord) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	if name == expiry.IndexName && s.armed.CompareAndSwap(true, false) {
		close(s.reached)
		<-s.release
	}
	return s.Store.Update(ctx, name, limit, fn)
}

// TestCollectSparesReadInFlight: a read through the wrapper of a file that
// is due, whose recording of the use is held up while a whole Collect runs
// on the store (another process's gc, on a real directory and SQLite),
// either answers the file's content and leaves it where it is, or does not
// answer it: a file the model has just been shown is never expired under
// it.
func TestCollectSparesReadInFlight(t *testing.T) {
	ctx := context.Background()
	for kind, url := range processStores(t) {
		t.Run(kind, func(t *testing.T) {
			inner, closer, err := storeurl.Open(ctx, url, &storeurl.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
			h := &slowRecord{Store: inner, reached: make(chan struct{}), release: make(chan struct{})}
			s := expiry.New(h, &expiry.Options{Now: clk.Now})
			if err := s.WriteFile(ctx, "a.md", []byte("old"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			clk.Add(31 * 24 * time.Hour)
			h.armed.Store(true)
			type answer struct {
				data []byte
				err  error
			}
			read := make(chan answer, 1)
			go func() {
				data, err := s.ReadFile(ctx, "a.md", 1<<20)
				read <- answer{data, err}
			}()
			<-h.reached
			rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
			close(h.release)
			got := <-read
			if err != nil {
				t.Fatal(err)
			}
			_, serr := inner.Stat(ctx, "a.md")
			switch {
			case got.err == nil && serr != nil:
				t.Errorf("the read answered %q, and then a.md is gone (%v): gc expired it under the reader (report %+v)", got.data, serr, rep)
			case got.err != nil && !errors.Is(got.err, memtool.ErrNotExist):
				t.Errorf("the read failed: %v", got.err)
			case got.err != nil && serr == nil:
				t.Errorf("the read answered %v, yet a.md is there", got.err)
			}
			if serr != nil {
				if trash, err := expiry.Trash(ctx, inner); err != nil || len(trash) != 1 || !strings.HasSuffix(trash[0].Path, "/a.md") {
					t.Errorf("a.md is gone and the trash holds %+v, %v", trash, err)
				}
			}
		})
	}
}

// gc in one process while another views the files it is expiring, on a
// real directory and SQLite, with clocks that agree: every file whose
// content a view answered is where it was when gc is done.
func TestCollectSparesReadsAcrossProcesses(t *testing.T) {
	const files = 120
	for kind, url := range processStores(t) {
		t.Run(kind, func(t *testing.T) {
			spec, _, name := dueFiles(t, url, files, 4)
			gc, viewer := startChild(t, spec), startChild(t, spec)
			var views []string
			for i := range files {
				views = append(views, tool(map[string]any{"command": "view", "path": name(i)}))
			}
			answers := childproc.All(t, []*childproc.Child{gc, viewer}, [][]string{{"gc"}, views})
			t.Logf("gc: %s", answers[0][0].Text)
			if answers[0][0].Error {
				t.Errorf("gc failed: %s", answers[0][0].Text)
			}
			read := readVia(t, url)
			shown := 0
			for i, a := range answers[1] {
				p := name(i)
				if a.Error {
					continue
				}
				shown++
				if got, ok := read(strings.TrimPrefix(p, "/memories/")); !ok || got != "v0 "+p {
					t.Errorf("%s was viewed while gc ran, and then holds %q (there: %v)", p, got, ok)
				}
			}
			t.Logf("%d of %d views answered the file", shown, files)
		})
	}
}
