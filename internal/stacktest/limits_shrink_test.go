package stacktest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/limits"
)

// A file over a lowered MaxFileSize may be written over with less, but a
// write over the limit never makes a file. If the file is deleted, or
// written small by another process, between the wrapper's look at its size
// and the write, the write would make a file over the limit (smaller than
// the old one, or larger than the small one): it must be refused then,
// with the quotas off or on.
func TestShrinkRacingChangeKeepsMaxFileSize(t *testing.T) {
	for name, base := range bases(t) {
		for _, opts := range []limits.Options{
			{MaxFileSize: 100},
			{MaxFileSize: 100, MaxFiles: 10, MaxBytes: 1000},
		} {
			// A delete through the same stack lands after the wrapper's
			// look (its Stat); a delete or a write by another process
			// lands at the first read of x, after the wrapper's look and
			// walk, as the write begins below it.
			for _, meanwhile := range []string{"delete", "other's delete", "other's small write"} {
				t.Run(fmt.Sprintf("%s/quotas %v/%s", name, opts.MaxBytes > 0, meanwhile), func(t *testing.T) {
					ctx := context.Background()
					h := newHook(base())
					st := newStack(t, h, stackOptions{limits: &opts})
					// Another process, with no limits, shares the store.
					other := newStack(t, h, stackOptions{keys: []encrypt.Key{st.key}})
					if err := other.top.WriteFile(ctx, "x", []byte(strings.Repeat("o", 300)), memtool.CreateOnly); err != nil {
						t.Fatal(err)
					}
					fired := false
					op, change := "read", func() error { return other.top.Remove(ctx, "x") }
					switch meanwhile {
					case "delete":
						op, change = "stat-after", func() error { return st.top.Remove(ctx, "x") }
					case "other's small write":
						change = func() error {
							return other.top.WriteFile(ctx, "x", []byte(strings.Repeat("s", 50)), memtool.Replace)
						}
					}
					h.set(once(op, "x", func() {
						fired = true
						if err := change(); err != nil {
							t.Errorf("%s x: %v", meanwhile, err)
						}
					}))
					werr := st.top.WriteFile(ctx, "x", []byte(strings.Repeat("w", 200)), memtool.Replace)
					h.set(nil)
					fi, err := st.top.Stat(ctx, "x")
					t.Logf("write: %v; x: %+v, %v", werr, fi, err)
					if !fired {
						// A wrapper that looks at x only as it writes (in
						// one update) leaves the same stack's delete no
						// moment to land in: the write shrank x.
						if meanwhile != "delete" || werr != nil {
							t.Errorf("the %s never landed; write: %v", meanwhile, werr)
						}
						return
					}
					if err == nil && fi.Size > 100 {
						t.Errorf("x holds %d bytes, over MaxFileSize 100, after the %s", fi.Size, meanwhile)
					}
				})
			}
		}
	}
}
