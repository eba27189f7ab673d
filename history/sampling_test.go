package history_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
)

// counterWrites is a memstore that counts the writes of history's usage
// counter.
type counterWrites struct {
	*memstore.Store
	n atomic.Int64
}

func (c *counterWrites) note(name string) {
	if name == history.DirName+"/usage/counter" {
		c.n.Add(1)
	}
}

func (c *counterWrites) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	c.note(name)
	return c.Store.Update(ctx, name, limit, fn)
}

func (c *counterWrites) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	c.note(name)
	return c.Store.WriteFile(ctx, name, data, mode)
}

// Versions much smaller than MaxBytes are counted by sampling, so the
// usage counter is written for a small share of them, and the bound still
// holds: 8,000 versions of 64 bytes (twice MaxBytes) under a bound of
// 256 KiB end within it, give or take what the sampling may let pass
// (a sixteenth of MaxBytes is one standard deviation; this allows four).
func TestSmallVersionsAreCountedBySampling(t *testing.T) {
	ctx := context.Background()
	inner := &counterWrites{Store: memstore.New()}
	const maxBytes = 256 << 10
	s := history.New(inner, &history.Options{MaxBytes: maxBytes})
	versions := 0
	for i := 0; versions < 8000; i++ {
		name := fmt.Sprintf("f%d.md", i)
		for j := range 5 {
			mode := memtool.Replace
			if j == 0 {
				mode = memtool.CreateOnly
			}
			if err := s.WriteFile(ctx, name, []byte(strings.Repeat(fmt.Sprint(j), 64)), mode); err != nil {
				t.Fatal(err)
			}
			versions += min(j, 1)
		}
		if err := s.Remove(ctx, name); err != nil {
			t.Fatal(err)
		}
		versions++
	}
	if total := versionTotal(t, inner); total > maxBytes+maxBytes/4 {
		t.Errorf("%d versions of 64 bytes hold %d bytes, over MaxBytes %d and the sampling's margin", versions, total, maxBytes)
	}
	if n := inner.n.Load(); n > int64(versions)/4 {
		t.Errorf("the usage counter was written %d times for %d versions: small versions should be counted by sampling", n, versions)
	}
	t.Logf("%d versions, %d writes of the counter, %d bytes of versions kept", versions, inner.n.Load(), versionTotal(t, inner))
}
