//go:build linux

package expiry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/must"
)

// indexReads counts the reads of the access index through it.
type indexReads struct {
	memtool.Store
	n atomic.Int64
}

func (s *indexReads) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if name == expiry.IndexName {
		s.n.Add(1)
	}
	return s.Store.ReadFile(ctx, name, limit)
}

// A read on a store that takes no writes (a read-only mount, a database
// role that may only read) cannot record its use; that costs it the
// failed record and no more. Only a change looks in the index for an
// earlier use to refuse over: a read changes nothing, so it must not read
// the index (up to 64 MiB, parsed whole) once more for every file viewed.
func TestReadOnReadOnlyStoreReadsNoIndex(t *testing.T) {
	mnt := hostfault.Tmpfs(t, "size=8m")
	dir := filepath.Join(mnt, "store")
	ctx := t.Context()
	w, err := filestore.Open(dir, nil)
	must.Succeed(t, err)
	s := expiry.New(w, nil)
	for i := range 50 {
		must.Succeed(t, s.WriteFile(ctx, fmt.Sprintf("f%02d.md", i), []byte("x"), memtool.CreateOnly))
	}
	w.Close()
	hostfault.Remount(t, mnt, true)
	t.Cleanup(func() { hostfault.Remount(t, mnt, false) })

	r, err := filestore.Open(dir, nil)
	must.Succeed(t, err)
	t.Cleanup(func() { r.Close() })
	counted := &indexReads{Store: r}
	var failures int
	s = expiry.New(counted, &expiry.Options{OnError: func(error) { failures++ }})
	data, err := s.ReadFile(ctx, "f07.md", 1<<20)
	if string(data) != "x" || err != nil {
		t.Fatalf("read on a read-only store: %q, %v", data, err)
	}
	if failures == 0 {
		t.Fatal("the read's use was recorded on a read-only store")
	}
	if n := counted.n.Load(); n > 0 {
		t.Errorf("a read whose use could not be recorded read the index %d times", n)
	}
}
