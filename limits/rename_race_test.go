package limits_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
)

// beforeWrite is a store that runs fn before each file write reaches it.
type beforeWrite struct {
	memtool.Forwarder
	memtool.ReadThrough
	s  memtool.Store
	fn func(name string)
}

func newBeforeWrite(s memtool.Store, fn func(name string)) *beforeWrite {
	bw := &beforeWrite{ReadThrough: memtool.PassReads(s), s: s, fn: fn}
	bw.Forwarder = memtool.Forward(s, nil)
	return bw
}

func (bw *beforeWrite) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	bw.fn(name)
	return bw.s.WriteFile(ctx, name, data, mode)
}

func (bw *beforeWrite) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return bw.s.Update(ctx, name, limit, fn)
}

func (bw *beforeWrite) Mkdir(ctx context.Context, name string) error { return bw.s.Mkdir(ctx, name) }

func (bw *beforeWrite) Remove(ctx context.Context, name string) error { return bw.s.Remove(ctx, name) }

// A write over a file counts the bytes it adds as its size less the old
// file's. A rename of that file landing between the count and the write
// would keep the old bytes under another name while the write made a new
// file: MaxBytes overshot by the old size. A rename therefore waits for
// a counted write, as other counted writes do.
func TestRenameDuringReplaceKeepsMaxBytes(t *testing.T) {
	ctx := context.Background()
	var lim memtool.Store
	var renamed chan error
	early := false
	inner := newBeforeWrite(memstore.New(), func(name string) {
		if name != "x" || renamed != nil || lim == nil {
			return
		}
		renamed = make(chan error, 1)
		go func() { renamed <- lim.(memtool.Renamer).Rename(ctx, "x", "z") }()
		// The rename either lands now (nothing holds it back) or waits
		// for this write; a second is long enough for the first.
		select {
		case err := <-renamed:
			early = true
			renamed <- err
		case <-time.After(time.Second):
		}
	})
	s := limits.New(inner, &limits.Options{MaxBytes: 100})
	if err := s.WriteFile(ctx, "x", []byte(strings.Repeat("a", 60)), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	lim = s
	werr := s.WriteFile(ctx, "x", []byte(strings.Repeat("b", 60)), memtool.Replace)
	if renamed == nil {
		t.Fatal("the write of x never reached the store")
	}
	if err := <-renamed; err != nil {
		t.Errorf("rename x z: %v", err)
	}
	var total int64
	for _, name := range []string{"x", "z"} {
		if fi, err := s.Stat(ctx, name); err == nil {
			total += fi.Size
		}
	}
	t.Logf("write: %v; rename landed before the write: %v; %d bytes stored", werr, early, total)
	if total > 100 {
		t.Errorf("the store holds %d bytes, over MaxBytes 100", total)
	}
}
