package expiry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/childproc"
	"github.com/memtool/memtool/storeurl"
)

// killWhen starts a child on spec, sends it lines, and kills it with
// SIGKILL as soon as ready says so (or lets it finish if it finishes
// first), then waits for it.
func killWhen(t *testing.T, spec childSpec, lines []string, ready func() bool) {
	t.Helper()
	raw, _ := json.Marshal(spec)
	cmd, in, out := childproc.Spawn(t, childEnv, string(raw))
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, out); close(done) }()
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(in, l+"\n"); err != nil {
				return
			}
		}
		in.Close()
	}()
	for {
		select {
		case <-done:
			cmd.Wait()
			return
		default:
		}
		if ready() {
			cmd.Process.Kill()
			<-done
			cmd.Wait()
			return
		}
		time.Sleep(time.Millisecond) // a poll, not a deadline
	}
}

// everyFileKept checks that each file is live or in the trash, with its
// content, and that the index still reads (a Collect after the crash
// succeeds). It returns how many are in the trash only.
func everyFileKept(t *testing.T, s memtool.Store, n int, name func(int) string) int {
	t.Helper()
	ctx := context.Background()
	trashed := 0
	for i := range n {
		p := name(i)
		rel := strings.TrimPrefix(p, "/memories/")
		if got, err := s.ReadFile(ctx, rel, 1<<20); err == nil {
			if string(got) != "v0 "+p {
				t.Errorf("%s holds %q", p, got)
			}
			continue
		}
		src, _, err := expiry.Find(ctx, s, p)
		if err != nil {
			t.Errorf("%s is neither live nor in the trash: %v", p, err)
			continue
		}
		if got, err := s.ReadFile(ctx, src, 1<<20); err != nil || string(got) != "v0 "+p {
			t.Errorf("%s in the trash holds %q, %v", p, got, err)
		}
		trashed++
	}
	return trashed
}

// A gc, and then a restore of every file, each killed with SIGKILL part
// way (once the trash holds some files, or lost some), on a real
// directory and SQLite: every file is then live or in the trash, with its
// content, and the access index still reads.
func TestKilledCollectAndRestoreKeepEveryFile(t *testing.T) {
	const files = 200
	ctx := context.Background()
	for kind, url := range processStores(t) {
		t.Run(kind, func(t *testing.T) {
			spec, _, name := dueFiles(t, url, files, 5)
			s, closer, err := storeurl.Open(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			inTrash := func() int {
				tr, _ := expiry.Trash(ctx, s)
				return len(tr)
			}
			for round, at := range []int{1, files / 3} {
				killWhen(t, spec, []string{"gc"}, func() bool { return inTrash() >= at })
				trashed := everyFileKept(t, s, files, name)
				t.Logf("round %d: gc killed with %d files in the trash", round, trashed)
				var restores []string
				for i := range files {
					restores = append(restores, "restore "+name(i))
				}
				killWhen(t, spec, restores, func() bool { return inTrash() <= trashed/2 })
				t.Logf("round %d: restore killed with %d files in the trash", round, everyFileKept(t, s, files, name))
				if _, err := expiry.Collect(ctx, s, expiry.CollectOptions{UnusedFor: 24 * time.Hour, DryRun: true}); err != nil {
					t.Errorf("round %d: after the kills, gc fails: %v", round, err)
				}
				// The rest back, for the next round.
				for i := range files {
					if _, err := expiry.Restore(ctx, s, name(i), epoch); err != nil && !strings.Contains(err.Error(), "exist") && !strings.Contains(err.Error(), "not in the trash") {
						t.Fatal(fmt.Errorf("restore %s: %w", name(i), err))
					}
				}
			}
		})
	}
}
