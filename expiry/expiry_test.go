package expiry_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

func TestWrapper(t *testing.T) {
	backendtest.RunWrapper(t, func(t *testing.T, inner memtool.Store) memtool.Store { return expiry.New(inner, nil) }, nil)
}

func run(t *testing.T, mem *memtool.Memory, in map[string]any) memtool.Result {
	t.Helper()
	b, _ := json.Marshal(in)
	r := mem.Run(context.Background(), b)
	return r
}

// visible lists the files a Memory on the wrapper would see.
func visible(t *testing.T, s memtool.Store) []string {
	t.Helper()
	return slices.DeleteFunc(storetest.Names(t, s), func(name string) bool { return strings.HasSuffix(name, "/") })
}

// TestCollect: with an injected clock, gc expires exactly the files not
// used for 30 days, dry-run changes nothing, restore brings a file back,
// and the trash is purged after the grace period.
func TestCollect(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		collectOn(t, inner)
	})
}

// collectOn runs TestCollect on the empty store inner.
func collectOn(t *testing.T, inner memtool.Store) {
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	mem := memtool.New(s, nil)
	for _, p := range []string{"/memories/read.md", "/memories/edited.md", "/memories/old.md", "/memories/d/old2.md", "/memories/renamed.md"} {
		if r := run(t, mem, map[string]any{"command": "create", "path": p, "file_text": "text of " + p}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	clk.Add(20 * 24 * time.Hour)
	run(t, mem, map[string]any{"command": "view", "path": "/memories/read.md"})
	run(t, mem, map[string]any{"command": "str_replace", "path": "/memories/edited.md", "old_str": "text", "new_str": "TEXT"})
	run(t, mem, map[string]any{"command": "rename", "old_path": "/memories/renamed.md", "new_path": "/memories/e/renamed.md"})
	// A listing is not a use of the files in it.
	run(t, mem, map[string]any{"command": "view", "path": "/memories"})
	clk.Add(11 * 24 * time.Hour) // 31 days after the creates, 11 after the uses

	opts := expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, DryRun: true, Now: clk.Now}
	before := visible(t, s)
	rep, err := expiry.Collect(ctx, inner, opts)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range rep.Expired {
		paths = append(paths, e.Path)
		if !e.LastUsed.Equal(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)) {
			t.Errorf("%s last used %v", e.Path, e.LastUsed)
		}
	}
	slices.Sort(paths)
	want := []string{"/memories/d/old2.md", "/memories/old.md"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("dry run expires %v, want %v", paths, want)
	}
	if after := visible(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("dry run changed the store: %v → %v", before, after)
	}

	opts.DryRun = false
	rep, err = expiry.Collect(ctx, inner, opts)
	if err != nil || len(rep.Expired) != 2 {
		t.Fatalf("gc: %+v, %v", rep, err)
	}
	if got, want := visible(t, s), []string{"e/renamed.md", "edited.md", "read.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after gc: %v, want %v", got, want)
	}
	r := run(t, mem, map[string]any{"command": "view", "path": "/memories/old.md"})
	if !r.IsError {
		t.Errorf("expired file still readable: %q", r.Text)
	}
	trash, err := expiry.Trash(ctx, inner)
	if err != nil || len(trash) != 2 {
		t.Errorf("trash: %+v, %v", trash, err)
	}

	got, err := expiry.Restore(ctx, inner, "/memories/old.md", clk.Now())
	if err != nil || got.Path != "/memories/old.md" {
		t.Fatalf("restore: %+v, %v", got, err)
	}
	if r := run(t, mem, map[string]any{"command": "view", "path": "/memories/old.md"}); r.IsError || !strings.Contains(r.Text, "text of /memories/old.md") {
		t.Errorf("restored file: %q", r.Text)
	}
	if _, err := expiry.Restore(ctx, inner, "/memories/old.md", clk.Now()); !errors.Is(err, expiry.ErrNotInTrash) {
		t.Errorf("restoring twice: %v", err)
	}
	run(t, mem, map[string]any{"command": "create", "path": "/memories/d/old2.md", "file_text": "new"})
	if _, err := expiry.Restore(ctx, inner, "/memories/d/old2.md", clk.Now()); !errors.Is(err, memtool.ErrExist) {
		t.Errorf("restoring onto a new file: %v", err)
	}

	// A restored file counts as used now; after the grace period the
	// trash (holding d/old2.md) is purged.
	clk.Add(8 * 24 * time.Hour)
	rep, err = expiry.Collect(ctx, inner, opts)
	if err != nil || len(rep.Expired) != 0 || len(rep.Purged) != 1 || !reflect.DeepEqual(rep.Purged[0].Paths, []string{"/memories/d/old2.md"}) {
		t.Errorf("purge: %+v, %v", rep, err)
	}
	if trash, _ := expiry.Trash(ctx, inner); len(trash) != 0 {
		t.Errorf("trash after purge: %+v", trash)
	}
}

// TestUnseenFiles: files with no recorded access (made without the
// wrapper) are recorded by gc and expire UnusedFor later, not at once.
func TestUnseenFiles(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	inner.WriteFile(ctx, "legacy.md", []byte("x"), memtool.CreateOnly)
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	opts := expiry.CollectOptions{UnusedFor: 24 * time.Hour, Now: clk.Now}
	if rep, err := expiry.Collect(ctx, inner, opts); err != nil || len(rep.Expired) != 0 {
		t.Fatalf("first gc: %+v, %v", rep, err)
	}
	clk.Add(24*time.Hour + expiry.DefaultResolution + time.Second)
	if rep, err := expiry.Collect(ctx, inner, opts); err != nil || len(rep.Expired) != 1 {
		t.Fatalf("second gc: %+v, %v", rep, err)
	}
}

// TestRestoreFileInTheWay: a file where the restored file's parent
// directory must be is ErrNotDir (memtool.MkdirAll's rule, as Memory's),
// and the file stays in the trash.
func TestRestoreFileInTheWay(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	must.Succeed(t, inner.Mkdir(ctx, "d"))
	must.Succeed(t, inner.WriteFile(ctx, "d/f.md", []byte("x"), memtool.CreateOnly))
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	opts := expiry.CollectOptions{UnusedFor: 24 * time.Hour, Now: clk.Now}
	expiry.Collect(ctx, inner, opts) // records d/f.md as used now
	clk.Add(24*time.Hour + expiry.DefaultResolution + time.Second)
	if rep, err := expiry.Collect(ctx, inner, opts); err != nil || len(rep.Expired) != 1 {
		t.Fatalf("gc: %+v, %v", rep, err)
	}
	must.Succeed(t, inner.Remove(ctx, "d"))
	must.Succeed(t, inner.WriteFile(ctx, "d", []byte("a file"), memtool.CreateOnly))
	if _, err := expiry.Restore(ctx, inner, "/memories/d/f.md", clk.Now()); !errors.Is(err, memtool.ErrNotDir) {
		t.Errorf("Restore under a file: %v, want ErrNotDir", err)
	}
	if trash, err := expiry.Trash(ctx, inner); err != nil || len(trash) != 1 {
		t.Errorf("the trash after the failed restore: %+v, %v", trash, err)
	}
}

// TestCollectSparesRecentUse: a file read at T (recorded) and edited at
// T+59m (within the resolution, so not recorded) was used 90 seconds ago
// at T+1h+30s: gc --unused-for 1h must leave it. It expires once it has
// really been unused for an hour, at the latest when its recorded access
// is UnusedFor + Resolution + 1s old.
func TestCollectSparesRecentUse(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	mem := memtool.New(expiry.New(inner, &expiry.Options{Now: clk.Now}), nil)
	run(t, mem, map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "one"})
	clk.Add(59 * time.Minute)
	if r := run(t, mem, map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "two"}); r.IsError {
		t.Fatal(r.Text)
	}
	opts := expiry.CollectOptions{UnusedFor: time.Hour, Now: clk.Now}
	for _, step := range []struct {
		after   time.Duration
		expired int
	}{
		{time.Hour + 30*time.Second - 59*time.Minute, 0}, // used 90 s ago
		{59*time.Minute + 30*time.Second, 0},             // used 61 min ago: may expire, need not
		{61 * time.Second, 1},                            // recorded 2h1s ago: due
	} {
		clk.Add(step.after)
		rep, err := expiry.Collect(ctx, inner, opts)
		if err != nil || len(rep.Expired) != step.expired {
			t.Fatalf("gc at %v after the edit: %+v, %v; want %d expired", clk.Now().Sub(time.Date(2026, 10, 1, 0, 59, 0, 0, time.UTC)), rep, err, step.expired)
		}
	}
}

// TestCollectRefusesBelowResolution: an age the index cannot measure is
// an error, and nothing moves.
func TestCollectRefusesBelowResolution(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	inner.WriteFile(ctx, "a.md", []byte("x"), memtool.CreateOnly)
	_, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 59 * time.Minute})
	if !errors.Is(err, expiry.ErrBelowResolution) {
		t.Fatalf("UnusedFor 59m at the default resolution: %v, want ErrBelowResolution", err)
	}
	if _, err := inner.Stat(ctx, expiry.IndexName); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the refused run wrote the index: %v", err)
	}
	if _, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 5 * time.Minute, Resolution: time.Minute}); err != nil {
		t.Errorf("UnusedFor 5m at a resolution of 1m: %v", err)
	}
}

// TestCollectLeavesReservedNames: entries that the store and other
// policies keep at the root under ".memtool" names (package history's
// versions, memtool's policy record), which memstore and the databases
// list, are no memories: gc never records, expires or moves them.
func TestCollectLeavesReservedNames(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	inner.Mkdir(ctx, ".memtool-history")
	inner.Mkdir(ctx, ".memtool-history/0a1b")
	for _, name := range []string{".memtool-history/0a1b/path", ".memtool-history/0a1b/1-1-edit", ".memtool-policy.json", "a.md"} {
		if err := inner.WriteFile(ctx, name, []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	opts := expiry.CollectOptions{UnusedFor: 24 * time.Hour, Now: clk.Now}
	for range 2 {
		if _, err := expiry.Collect(ctx, inner, opts); err != nil {
			t.Fatal(err)
		}
		clk.Add(48 * time.Hour)
	}
	for _, name := range []string{".memtool-history/0a1b/path", ".memtool-history/0a1b/1-1-edit", ".memtool-policy.json"} {
		if _, err := inner.Stat(ctx, name); err != nil {
			t.Errorf("gc moved %s: %v", name, err)
		}
	}
	if _, err := inner.Stat(ctx, "a.md"); err == nil {
		t.Errorf("a.md, unused for 48h, did not expire")
	}
	index, _ := inner.ReadFile(ctx, expiry.IndexName, 1<<20)
	if strings.Contains(string(index), ".memtool") {
		t.Errorf("the index records reserved names: %s", index)
	}
}

// TestIndexForgetsRemovedFiles: Collect drops the entries of files that
// are gone, so the index does not grow forever.
func TestIndexForgetsRemovedFiles(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	mem := memtool.New(expiry.New(inner, nil), nil)
	run(t, mem, map[string]any{"command": "create", "path": "/memories/gone.md", "file_text": "x"})
	run(t, mem, map[string]any{"command": "create", "path": "/memories/kept.md", "file_text": "x"})
	run(t, mem, map[string]any{"command": "delete", "path": "/memories/gone.md"})
	if _, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: time.Hour}); err != nil {
		t.Fatal(err)
	}
	data, err := inner.ReadFile(ctx, ".memtool-expiry.json", 1<<20)
	if err != nil || strings.Contains(string(data), "gone.md") || !strings.Contains(string(data), "kept.md") {
		t.Errorf("index after gc: %s, %v", data, err)
	}
}

// TestResolution: reads within Resolution of a recorded access do not
// write the index; a write does not either, within it.
func TestResolution(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	var writes int
	counting := &countingStore{Store: inner, writes: &writes}
	s := expiry.New(counting, &expiry.Options{Now: clk.Now, Resolution: time.Hour})
	s.WriteFile(ctx, "a", []byte("x"), memtool.CreateOnly) // the file and the new index
	base := writes
	for range 10 {
		s.ReadFile(ctx, "a", 10)
	}
	if writes != base {
		t.Errorf("reads within the resolution wrote the index %d times", writes-base)
	}
	clk.Add(time.Hour)
	s.ReadFile(ctx, "a", 10)
	if writes != base+1 {
		t.Errorf("a read after the resolution: %d index writes, want 1", writes-base)
	}
}

// countingStore counts the writes that reach memstore.
type countingStore struct {
	*memstore.Store
	writes *int
}

func (c *countingStore) WriteFile(ctx context.Context, n string, d []byte, m memtool.WriteMode) error {
	*c.writes++
	return c.Store.WriteFile(ctx, n, d, m)
}

func (c *countingStore) Update(ctx context.Context, n string, l int64, fn func([]byte) ([]byte, error)) error {
	*c.writes++
	return c.Store.Update(ctx, n, l, fn)
}

// TestBattery: the same answers with and without the wrapper.
func TestBattery(t *testing.T) {
	battery.SameAnswers(t, battery.Inputs(t), expiry.New(memstore.New(), nil))
}

// BenchmarkView: a view of a 4 KiB file through Memory on memstore,
// without and with the wrapper (the access is recorded once an hour).
func BenchmarkView(b *testing.B) {
	text := strings.Repeat("abcdefghijklmno\n", 256)
	for _, wrapped := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "expiry"}[wrapped], func(b *testing.B) {
			var s memtool.Store = memstore.New()
			if wrapped {
				s = expiry.New(s, nil)
			}
			mem := memtool.New(s, nil)
			ctx := context.Background()
			in := func(m map[string]any) []byte { j, _ := json.Marshal(m); return j }
			mem.Run(ctx, in(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": text}))
			view := in(map[string]any{"command": "view", "path": "/memories/a.md"})
			for b.Loop() {
				if r := mem.Run(ctx, view); r.IsError {
					b.Fatal(r.Text)
				}
			}
		})
	}
}

// TestSearchIsNoUse: a search reads every file of a store without an
// index, and of a path naming one file; neither counts as a use, so the
// files still expire on time, while a view does count.
func TestSearchIsNoUse(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	mem := memtool.New(expiry.New(inner, &expiry.Options{Now: clk.Now, Resolution: time.Second}), nil)
	for _, p := range []string{"/memories/a.md", "/memories/d/b.md", "/memories/viewed.md"} {
		if r := run(t, mem, map[string]any{"command": "create", "path": p, "file_text": "the quokka of " + p}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	clk.Add(20 * 24 * time.Hour)
	for _, q := range []memtool.SearchQuery{{Query: "quokka"}, {Query: "qu"}, {Query: "quokka", Path: "/memories/a.md"}} {
		r, err := mem.Search(ctx, q)
		if err != nil || r.Total == 0 {
			t.Fatalf("Search(%+v): %+v, %v", q, r, err)
		}
	}
	if r := run(t, mem, map[string]any{"command": "view", "path": "/memories/viewed.md"}); r.IsError {
		t.Fatal(r.Text)
	}
	clk.Add(11 * 24 * time.Hour)
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rep.Expired {
		got = append(got, e.Path)
	}
	slices.Sort(got)
	if want := []string{"/memories/a.md", "/memories/d/b.md"}; !slices.Equal(got, want) {
		t.Errorf("expired after searches: %v, want %v (the viewed file stays)", got, want)
	}
}
