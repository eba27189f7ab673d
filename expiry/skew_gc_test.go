package expiry_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/childproc"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storeurl"
)

// skewStores are the shared stores the clock tests run on: a directory,
// SQLite and PostgreSQL, each opened by processes of their own.
func skewStores(t *testing.T) map[string]func(*testing.T) string {
	stores := map[string]func(*testing.T) string{"postgres": func(t *testing.T) string { return pgtest.URL(t) }}
	for kind, url := range processStores(t) {
		stores[kind] = func(*testing.T) string { return url }
	}
	return stores
}

// clocked starts a child on the store at url whose clock, of its own,
// reads at; the returned function sets it.
func clocked(t *testing.T, url string, at time.Time) (*childproc.Child, func(time.Time)) {
	t.Helper()
	clock := filepath.Join(t.TempDir(), "clock")
	setClock(t, clock, at)
	return startChild(t, childSpec{Store: url, Clock: clock}), func(tm time.Time) { setClock(t, clock, tm) }
}

// answer runs one line in c and returns its answer.
func answer(t *testing.T, c *childproc.Child, line string) childproc.Answer {
	t.Helper()
	as, err := c.Run([]string{line})
	if err != nil {
		t.Fatal(err)
	}
	return as[0]
}

func view(p string) string { return tool(map[string]any{"command": "view", "path": p}) }

func create(p, text string) string {
	return tool(map[string]any{"command": "create", "path": p, "file_text": text})
}

// TestSlowGCTrashKeptForGrace: a gc on a machine whose clock is ten days
// behind the writers' expires a file that was due (unused for twenty
// days). Its batch must stay restorable for the grace period (seven
// days): a gc with the writers' clock the next day must not take the
// batch for eleven days old and purge it, and a file that gc saw for the
// first time (written around the wrapper) must not count as used ten
// days early, and expire at that next gc.
func TestSlowGCTrashKeptForGrace(t *testing.T) {
	for kind, url := range skewStores(t) {
		t.Run(kind, func(t *testing.T) {
			url := url(t)
			writer, setW := clocked(t, url, epoch.Add(-20*24*time.Hour))
			succeed(t, writer, create("/memories/old.md", "old"))
			setW(epoch)
			succeed(t, writer, create("/memories/busy.md", "busy"))
			write := openVia(t, url)
			write("new.md", "written around the wrapper")

			slow, _ := clocked(t, url, epoch.Add(-10*24*time.Hour))
			if a := answer(t, slow, "gc"); a.Error || a.Text != "1 <nil>" {
				t.Fatalf("gc ten days behind: %s; want old.md expired", a.Text)
			}
			setW(epoch.Add(24 * time.Hour))
			if a := answer(t, writer, "gc"); a.Error {
				t.Fatalf("gc the next day: %s", a.Text)
			}
			read := readVia(t, url)
			if _, ok := read("new.md"); !ok {
				t.Errorf("new.md, first seen by the slow gc a day ago, expired at the next gc (unused for 1 day, checked a day after it was written)")
			}
			if a := answer(t, writer, "restore /memories/old.md"); a.Error {
				t.Errorf("restore of old.md, expired a day ago (grace 7 days): %s", a.Text)
			}
			if got, _ := read("old.md"); got != "old" {
				t.Errorf("old.md holds %q after its restore", got)
			}
		})
	}
}

// TestFastGCRestoreLatest: a gc on a machine whose clock is a year ahead
// expires a file; the file is written anew, and a gc with the writers'
// clock expires that one later. Restore must bring back the most
// recently expired content, the new one, not the one in the batch the
// fast clock named a year ahead.
func TestFastGCRestoreLatest(t *testing.T) {
	for kind, url := range skewStores(t) {
		t.Run(kind, func(t *testing.T) {
			url := url(t)
			writer, setW := clocked(t, url, epoch)
			succeed(t, writer, create("/memories/a.md", "first"))
			fast, _ := clocked(t, url, epoch.Add(365*24*time.Hour))
			if a := answer(t, fast, "gc"); a.Error || a.Text != "1 <nil>" {
				t.Fatalf("gc a year ahead: %s", a.Text)
			}
			setW(epoch.Add(time.Hour))
			succeed(t, writer, create("/memories/a.md", "second"))
			setW(epoch.Add(3 * 24 * time.Hour))
			if a := answer(t, writer, "gc"); a.Error || a.Text != "1 <nil>" {
				t.Fatalf("gc: %s", a.Text)
			}
			if a := answer(t, writer, "restore /memories/a.md"); a.Error {
				t.Fatalf("restore: %s", a.Text)
			}
			if got, _ := readVia(t, url)("a.md"); got != "second" {
				t.Errorf("restore brought back %q; want %q, the content expired last", got, "second")
			}
		})
	}
}

// openVia returns a function that writes a file to the store at url
// directly, around the wrapper.
func openVia(t *testing.T, url string) func(name, text string) {
	t.Helper()
	s, closer, err := storeurl.Open(context.Background(), url, &storeurl.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return func(name, text string) {
		t.Helper()
		must.Succeed(t, s.WriteFile(context.Background(), name, []byte(text), memtool.CreateOnly))
	}
}
