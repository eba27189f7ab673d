package resource_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
)

// readLimits records the limit of every ReadFile of its store.
type readLimits struct {
	*memstore.Store
	mu     sync.Mutex
	limits []int64
}

func (s *readLimits) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	s.mu.Lock()
	s.limits = append(s.limits, limit)
	s.mu.Unlock()
	return s.Store.ReadFile(ctx, name, limit)
}

// A version over the server's file limit is 413, and is never read: the
// store is not asked for more than the limit (a version of any size was
// read whole into memory, then refused).
func TestVersionOverTheFileLimit(t *testing.T) {
	base := memstore.New()
	rec := &readLimits{Store: base}
	srv := serveStore(t, history.New(rec, nil), true, &resource.Options{MaxFileBytes: 100})
	const path = "/memories/big.md"
	if err := base.WriteFile(context.Background(), "big.md", []byte(strings.Repeat("x", 90)), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	// A version of 90 bytes, then one of 150 written past the server.
	wantStatus(t, put(t, srv, path, strings.Repeat("y", 80), nil), http.StatusOK)
	stack := history.New(base, nil)
	if err := stack.WriteFile(context.Background(), "big.md", []byte(strings.Repeat("z", 150)), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	if err := stack.WriteFile(context.Background(), "big.md", []byte("small"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.limits = nil
	rec.mu.Unlock()
	if got := string(wantStatus(t, mustDo(t, srv, "GET", "/v1/version"+p(path, "n", "1"), nil, nil), http.StatusOK)); got != strings.Repeat("x", 90) {
		t.Errorf("version 1 = %q", got)
	}
	wantError(t, mustDo(t, srv, "GET", "/v1/version"+p(path, "n", "3"), nil, nil), http.StatusRequestEntityTooLarge, "too_large")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, l := range rec.limits {
		if l > 100 {
			t.Errorf("the store was asked to read up to %d bytes, over the server's limit of 100", l)
		}
	}
}
