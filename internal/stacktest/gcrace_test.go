package stacktest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/limits"
)

// Edits through the whole stack while gc runs again and again, starting
// at a time when every file is due: each edit is recorded as a use
// before it is made, so gc puts back every file it moved that was then
// edited. At the end every file that took an edit holds exactly the
// edits that were acknowledged, and none that was refused; one that took
// none (gc moved it first) is in the trash as it was.
func TestEditsDuringGCKeepEveryAcknowledgedEdit(t *testing.T) {
	for name, base := range bases(t) {
		if name == "sqlitestore" && testing.Short() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st := newStack(t, base(), stackOptions{
				limits:  &limits.Options{MaxFiles: 100, MaxBytes: 1 << 20},
				expiry:  &expiry.Options{Now: clock.Now},
				history: &history.Options{Now: clock.Now, MaxVersions: 3},
			})
			const writers, edits = 4, 25
			for w := range writers {
				st.mustRun(t, create(fmt.Sprintf("/memories/d%d/f.md", w), "start\n"))
			}
			clock.Add(40 * 24 * time.Hour)
			acked := make([][]string, writers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					<-start
					p := fmt.Sprintf("/memories/d%d/f.md", w)
					for i := range edits {
						line := fmt.Sprintf("w%d-e%d", w, i)
						res := st.run(t, map[string]any{"command": "insert", "path": p, "insert_line": 0, "insert_text": line})
						if !res.IsError {
							acked[w] = append(acked[w], line)
						}
					}
				})
			}
			stop := make(chan struct{})
			var gcErr error
			var gcs int
			gcDone := make(chan struct{})
			go func() {
				defer close(gcDone)
				<-start
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clock.Now}); err != nil {
						gcErr = err
						return
					}
					gcs++
				}
			}()
			close(start)
			wg.Wait()
			close(stop)
			<-gcDone
			if gcErr != nil {
				t.Fatalf("gc: %v", gcErr)
			}
			trash, err := expiry.Trash(ctx, st.belowExpiry)
			if err != nil {
				t.Fatal(err)
			}
			for w := range writers {
				name := fmt.Sprintf("d%d/f.md", w)
				got, err := st.top.ReadFile(ctx, name, 1<<20)
				if len(acked[w]) == 0 {
					if err != nil && !slices.Contains(trash, expiry.Trashed{Path: "/memories/" + name, Expired: clock.Now()}) {
						t.Errorf("%s took no edit, and is neither there (%v) nor in the trash", name, err)
					}
					continue
				}
				want := slices.Clone(acked[w])
				slices.Reverse(want)
				want = append(want, "start", "")
				if err != nil || string(got) != strings.Join(want, "\n") {
					t.Errorf("%s: %v\ngot:\n%s\nwant (the %d acknowledged edits):\n%s\ntrash: %v", name, err, got, len(acked[w]), strings.Join(want, "\n"), trash)
				}
			}
			t.Logf("%d gc runs; acknowledged %d %d %d %d; trash %v", gcs, len(acked[0]), len(acked[1]), len(acked[2]), len(acked[3]), trash)
		})
	}
}

// An edit that lands after gc has read the index for the last time
// before its moves, and before it moves the file (as gc makes the
// trash's directories), is recorded as a use: gc puts the file back with
// the edit, and leaves nothing of it in the trash. (The test above races
// at random and may never land an edit there.)
func TestEditAtGCMoveIsPutBack(t *testing.T) {
	for name, base := range bases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			h := newHook(base())
			st := newStack(t, h, stackOptions{expiry: &expiry.Options{Now: clock.Now}, history: &history.Options{Now: clock.Now}})
			st.mustRun(t, create("/memories/d/f.md", "start\n"))
			clock.Add(40 * 24 * time.Hour)
			var res *memtool.Result
			h.set(func(op, name string) {
				if op != "mkdir" || !strings.HasPrefix(name, expiry.TrashName+"/") || res != nil {
					return
				}
				r := st.run(t, map[string]any{"command": "insert", "path": "/memories/d/f.md", "insert_line": 0, "insert_text": "edit"})
				res = &r
			})
			rep, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clock.Now})
			h.set(nil)
			if err != nil {
				t.Fatalf("gc: %v", err)
			}
			if res == nil {
				t.Fatal("gc made no directory in the trash: the edit never landed")
			}
			if res.IsError {
				t.Fatalf("the edit during gc: %s", res.Text)
			}
			if got, err := st.top.ReadFile(ctx, "d/f.md", 1<<20); err != nil || string(got) != "edit\nstart\n" {
				trash, _ := expiry.Trash(ctx, st.belowExpiry)
				t.Errorf("d/f.md after its acknowledged edit during gc: %q, %v; gc's report %+v, trash %v", got, err, rep, trash)
			}
			if trash, err := expiry.Trash(ctx, st.belowExpiry); err != nil || len(trash) != 0 || len(rep.Expired) != 0 {
				t.Errorf("trash %v, %v; report %+v; want nothing expired", trash, err, rep)
			}
		})
	}
}
