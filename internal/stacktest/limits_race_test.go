package stacktest

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/storetest"
)

// A create onto a name that holds a file is refused by the store; but if
// a delete of that file (one turn's parallel calls: delete x, create x)
// lands between the quota's look at the name and the write, the write
// creates the file. It must then pass the limits like any create: the
// store never holds a file over MaxFileSize nor more than MaxBytes.
func TestCreateRacingDeleteKeepsLimits(t *testing.T) {
	for name, base := range bases(t) {
		t.Run(name, func(t *testing.T) {
			h := newHook(base())
			st := newStack(t, h, stackOptions{limits: &limits.Options{MaxFileSize: 100, MaxFiles: 10, MaxBytes: 150}})
			st.mustRun(t, create("/memories/x", "small"))
			st.mustRun(t, create("/memories/y", strings.Repeat("y", 90)))
			ctx := context.Background()
			fired := false
			h.set(once("stat-after", "x", func() {
				fired = true
				if err := st.top.Remove(ctx, "x"); err != nil {
					t.Errorf("delete x: %v", err)
				}
			}))
			res := st.run(t, create("/memories/x", strings.Repeat("z", 1000)))
			h.set(nil)
			if !fired {
				t.Errorf("the delete of x never landed: nothing raced")
			}
			files, size := storetest.Usage(t, st.top)
			fi, err := st.top.Stat(ctx, "x")
			t.Logf("create: %v %q; store: %d entries, %d bytes", res.IsError, res.Text, files, size)
			if err == nil && fi.Size > 100 {
				t.Errorf("x holds %d bytes, over MaxFileSize 100", fi.Size)
			}
			if size > 150 {
				t.Errorf("the store holds %d bytes, over MaxBytes 150", size)
			}
			if !res.IsError && err != nil {
				t.Errorf("create acknowledged, but x: %v", err)
			}
		})
	}
}

// A revert writes over the file (Replace), and the quota counts the bytes
// it adds as its size less the old file's. If a delete of the file lands
// between the look at the old size and the walk that counts the store,
// the walk no longer counts the old file, and the write must not take the
// old size off a second time.
func TestRevertRacingDeleteKeepsMaxBytes(t *testing.T) {
	for name, base := range bases(t) {
		t.Run(name, func(t *testing.T) {
			h := newHook(base())
			st := newStack(t, h, stackOptions{limits: &limits.Options{MaxFiles: 10, MaxBytes: 100}})
			st.mustRun(t, create("/memories/x", strings.Repeat("z", 70)))
			st.mustRun(t, map[string]any{"command": "str_replace", "path": "/memories/x", "old_str": strings.Repeat("z", 70), "new_str": strings.Repeat("x", 50)})
			st.mustRun(t, create("/memories/y", strings.Repeat("y", 40)))
			ctx := context.Background()
			vs, err := history.Versions(ctx, st.belowHistory, "/memories/x")
			if err != nil || len(vs) != 1 || vs[0].Size != 70 {
				t.Fatalf("versions of x: %v, %v", vs, err)
			}
			fired := false
			h.set(once("stat-after", "x", func() {
				fired = true
				if err := st.top.Remove(ctx, "x"); err != nil {
					t.Errorf("delete x: %v", err)
				}
			}))
			// 70 bytes at x: 110 in all whether the delete came first
			// or not (40 + 70, or 40 + 50 - 50 + 70).
			err = history.Revert(ctx, st.top, st.belowHistory, "/memories/x", vs[0].N)
			h.set(nil)
			if !fired {
				t.Errorf("the delete of x never landed: nothing raced")
			}
			files, size := storetest.Usage(t, st.top)
			t.Logf("revert: %v; store: %d entries, %d bytes", err, files, size)
			if err == nil || size > 100 {
				t.Errorf("revert of x answered %v; the store holds %d bytes, over MaxBytes 100", err, size)
			}
		})
	}
}
