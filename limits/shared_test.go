package limits_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/limits"
)

// meeting holds writes until two are waiting at once, or a while: two
// writes that both passed a check meet there, and are let through
// together.
type meeting struct {
	mu      sync.Mutex
	waiting int
	met     chan struct{}
}

func (m *meeting) wait() {
	m.mu.Lock()
	if m.waiting++; m.waiting == 2 {
		close(m.met)
	}
	m.mu.Unlock()
	select {
	case <-m.met:
	case <-time.After(300 * time.Millisecond):
	}
}

// meetingStore is a store, and each of its tenants', whose file writes
// wait at one meeting.
type meetingStore struct {
	memtool.Forwarder
	memtool.ReadThrough
	s memtool.Store
	m *meeting
}

func newMeetingStore(s memtool.Store, m *meeting) *meetingStore {
	ms := &meetingStore{ReadThrough: memtool.PassReads(s), s: s, m: m}
	ms.Forwarder = memtool.Forward(s, func(t memtool.Store, _ string) memtool.Store { return newMeetingStore(t, m) })
	return ms
}

func (ms *meetingStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	ms.m.wait()
	return ms.s.WriteFile(ctx, name, data, mode)
}

func (ms *meetingStore) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return ms.s.Update(ctx, name, limit, fn)
}

func (ms *meetingStore) Mkdir(ctx context.Context, name string) error {
	return ms.s.Mkdir(ctx, name)
}

func (ms *meetingStore) Remove(ctx context.Context, name string) error {
	return ms.s.Remove(ctx, name)
}

// The stores Tenant returns for one tenant, each time it is asked, count
// as one: two writes through two of them at once cannot both pass the
// check and overshoot the tenant's MaxFiles.
func TestTenantQuotaShared(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	lim := limits.New(newMeetingStore(fs, &meeting{met: make(chan struct{})}), &limits.Options{MaxFiles: 1})
	var alice [2]memtool.Store
	for i := range alice {
		if alice[i], err = lim.(memtool.Tenanted).Tenant(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	var errs [2]error
	var wg sync.WaitGroup
	for i, name := range []string{"one", "two"} {
		wg.Go(func() { errs[i] = alice[i].WriteFile(ctx, name, []byte("x"), memtool.CreateOnly) })
	}
	wg.Wait()
	entries, err := alice[0].ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var refused *limits.Error
	oneRefused := (errs[0] == nil) != (errs[1] == nil) && errors.As(errors.Join(errs[:]...), &refused)
	if len(entries) != 1 || !oneRefused {
		t.Errorf("two creates through two stores of one tenant with MaxFiles 1: %d entries, errors %v; want 1 entry and one refusal", len(entries), errs)
	}
}
