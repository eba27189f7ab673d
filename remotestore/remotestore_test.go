package remotestore_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

const token = "test-token-0123456789"

// serve starts a real HTTP server on loopback with the resource API over
// inner, behind a resolver that checks the bearer token, and returns a
// remote store that talks to it.
func serve(t testing.TB, inner memtool.Store) *remotestore.Store {
	t.Helper()
	return remotetest.Open(t, inner, token)
}

func fileStore(t testing.TB) memtool.Store {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "memories"), nil)
	return storetest.Opened(t, s, err)
}

func sqliteStore(t testing.TB) memtool.Store {
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "memory.db"), nil)
	return storetest.Opened(t, s, err)
}

func pgStore(t testing.TB) memtool.Store {
	s, err := pgstore.Open(t.Context(), pgtest.URL(t), nil)
	return storetest.Opened(t, s, err)
}

// backends are the stores behind the server in these tests.
var backends = []struct {
	name string
	open func(t testing.TB) memtool.Store
}{
	{"memstore", func(testing.TB) memtool.Store { return memstore.New() }},
	{"filestore", fileStore},
	{"sqlite", sqliteStore},
	{"postgres", pgStore},
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) memtool.Store { return serve(t, b.open(t)) })
		})
	}
}

// TestBattery runs the reference battery through Memory over the remote
// store: every answer is the one Memory gives over a local memstore.
func TestBattery(t *testing.T) {
	inputs := battery.Inputs(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			battery.SameAnswers(t, inputs, serve(t, b.open(t)))
		})
	}
}

func TestErrorsAreSentinels(t *testing.T) {
	s := serve(t, memstore.New())
	ctx := t.Context()
	if _, err := s.Stat(ctx, "missing"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Stat(missing) = %v, want ErrNotExist", err)
	}
}
