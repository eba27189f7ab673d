//go:build linux

package expiry_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/internal/testclock"
)

// A write whose use the wrapper cannot record, on a disk with room for the
// file but not for the access index, must not leave the file with the
// access recorded before it: a Collect would then expire the file as
// unused since then, days after it was written.
func TestDiskFullWriteKeepsNoStaleAccess(t *testing.T) {
	mnt := hostfault.Ext4(t, 4<<20, "-b", "1024", "-m", "0")
	inner, err := filestore.Open(filepath.Join(mnt, "store"), nil)
	must.Succeed(t, err)
	t.Cleanup(func() { inner.Close() }) // before the unmount
	ctx := t.Context()
	clk := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var failures []error
	s := expiry.New(inner, &expiry.Options{Now: clk.Now, OnError: func(err error) { failures = append(failures, err) }})
	// An index of some 100 KiB: other files' accesses.
	access := map[string]int64{}
	for i := range 2000 {
		access[fmt.Sprintf("other/%s-%04d.md", strings.Repeat("x", 30), i)] = clk.Now().Unix()
	}
	ix, _ := json.Marshal(map[string]any{"version": 1, "access": access})
	must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, ix, memtool.CreateOnly))
	for _, op := range []string{"write", "update"} {
		must.Succeed(t, s.WriteFile(ctx, op+".md", []byte("first"), memtool.CreateOnly))
	}

	clk.Add(29 * 24 * time.Hour)
	freeAll := hostfault.Fill(t, mnt, 16<<10) // room for a small file, not for the index
	errW := s.WriteFile(ctx, "write.md", []byte("written on day 29"), memtool.Replace)
	errU := s.Update(ctx, "update.md", 1<<20, func([]byte) ([]byte, error) { return []byte("edited on day 29"), nil })
	t.Logf("write: %v; update: %v; failures to record: %v", errW, errU, failures)
	if len(failures) == 0 {
		t.Fatal("the index was written: the disk had room for it")
	}
	freeAll()

	clk.Add(2 * 24 * time.Hour)
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
	must.Succeed(t, err)
	expired := map[string]bool{}
	for _, e := range rep.Expired {
		expired[e.Path] = true
	}
	for _, c := range []struct {
		name, text string
		err        error
	}{{"write.md", "written on day 29", errW}, {"update.md", "edited on day 29", errU}} {
		switch {
		case c.err == nil && expired[memtool.VirtualPath(c.name)]:
			t.Errorf("%s expired two days after a change answered as done", c.name)
		case c.err == nil:
			if data, err := s.ReadFile(ctx, c.name, 1<<20); string(data) != c.text {
				t.Errorf("%s reads %q, %v; want %q", c.name, data, err, c.text)
			}
		case !expired[memtool.VirtualPath(c.name)]:
			if data, err := s.ReadFile(ctx, c.name, 1<<20); string(data) != "first" {
				t.Errorf("%s, whose change failed, reads %q, %v", c.name, data, err)
			}
		}
	}
}

// gc on a disk full to its last block purges the trash batches past
// their grace period, which frees the space, whatever else it cannot do
// there (write the access index, make the directory of its own batch):
// the disk would otherwise stay full, every gc failing before the purge.
func TestDiskFullCollectPurges(t *testing.T) {
	mnt := hostfault.Ext4(t, 4<<20, "-b", "1024", "-m", "0")
	inner, err := filestore.Open(filepath.Join(mnt, "store"), nil)
	must.Succeed(t, err)
	t.Cleanup(func() { inner.Close() })
	ctx := t.Context()
	clk := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	big := strings.Repeat("old notes\n", 20000)
	must.Succeed(t, s.WriteFile(ctx, "old.md", []byte(big), memtool.CreateOnly))
	must.Succeed(t, s.WriteFile(ctx, "later.md", []byte("later"), memtool.CreateOnly))
	clk.Add(31 * 24 * time.Hour)
	must.Succeed(t, s.WriteFile(ctx, "kept.md", []byte("kept"), memtool.CreateOnly))
	opts := expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}
	rep, err := expiry.Collect(ctx, inner, opts)
	must.Succeed(t, err)
	if len(rep.Expired) != 2 {
		t.Fatalf("expired %v, want old.md and later.md", rep.Expired)
	}
	_, err = expiry.Restore(ctx, inner, "/memories/later.md", clk.Now())
	must.Succeed(t, err)

	clk.Add(31 * 24 * time.Hour) // later.md is due, old.md's batch past its grace
	freeAll := hostfault.Fill(t, mnt, 0)
	defer freeAll()
	rep, err = expiry.Collect(ctx, inner, opts)
	t.Logf("gc on a full disk: %+v, %v", rep, err)
	if len(rep.Purged) != 1 || len(rep.Purged[0].Paths) != 1 || rep.Purged[0].Paths[0] != "/memories/old.md" {
		t.Errorf("gc on a full disk purged %+v, want the batch of old.md", rep.Purged)
	}
	trash, terr := expiry.Trash(ctx, inner)
	must.Succeed(t, terr)
	for _, tr := range trash {
		if tr.Path == "/memories/old.md" {
			t.Errorf("old.md is still in the trash, past its grace")
		}
	}
	// What gc answered as expired is in the trash; the rest is in place.
	in := map[string]bool{}
	for _, tr := range trash {
		in[tr.Path] = true
	}
	for _, e := range rep.Expired {
		if !in[e.Path] {
			t.Errorf("%s answered as expired is not in the trash", e.Path)
		}
	}
	for _, name := range []string{"later.md", "kept.md"} {
		if _, err := inner.Stat(ctx, name); err != nil && !in[memtool.VirtualPath(name)] {
			t.Errorf("%s is neither in place nor in the trash: %v", name, err)
		}
	}
}
