// Package sqltreetest holds the tests that sqlitestore and pgstore, the
// backends of package sqltree, run alike.
package sqltreetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

// Search runs the search suites on a backend: newDB returns a new, empty
// database, and open a store on it of its own, as another process's
// would be.
//
//   - the search conformance suite (storetest.RunSearch);
//   - after writers racing in two stores on one database, the index
//     finds exactly the lines a scan finds (storetest.CheckSearchIndex).
func Search(t *testing.T, newDB func(t testing.TB) string, open func(t *testing.T, db string) memtool.Store) {
	t.Run("Conformance", func(t *testing.T) {
		storetest.RunSearch(t, func(t *testing.T) memtool.Store { return open(t, newDB(t)) })
	})
	t.Run("ConcurrentWriters", func(t *testing.T) {
		db := newDB(t)
		stores := []memtool.Store{open(t, db), open(t, db)}
		storetest.ChurnTogether(t, 2*time.Second, stores...)
		storetest.CheckSearchIndex(t, open(t, db), storetest.ChurnQueries...)
	})
}

// CancelledWrite checks that a write to s, which must be stuck waiting
// (for a held lock, a frozen server), ends with the context's error when
// its context is cancelled, long before any timeout of the store's.
func CancelledWrite(t *testing.T, s memtool.Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := storetest.Answer(t, "cancelled WriteFile", func() error {
		return s.WriteFile(ctx, "cancelled", []byte("c"), memtool.CreateOnly)
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled WriteFile: %v, want context.Canceled", err)
	}
}
