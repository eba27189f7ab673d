package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

func open(t *testing.T, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		return open(t, pgtest.URL(t))
	})
}

func TestConformanceTenant(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		ctx := context.Background()
		s := open(t, pgtest.URL(t))
		// A neighbour with entries of the same names must stay invisible.
		other, err := s.Tenant(ctx, "neighbour")
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Mkdir(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := other.WriteFile(ctx, "a/b", []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tenant(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		return ts
	})
}

// TestConcurrentOpen opens one new database from many goroutines at once:
// the migrations run once, and every open succeeds.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.Open(context.Background(), url, nil)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestTenancyIsExclusive(t *testing.T) {
	ctx := context.Background()
	single := open(t, pgtest.URL(t))
	if _, err := single.Stat(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := single.Tenant(ctx, "t1"); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenant on a single-tenant database: %v, want ErrTenancy", err)
	}

	url := pgtest.URL(t)
	if _, err := open(t, url).Tenant(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, url).ReadDir(ctx, ""); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("tenant-less ReadDir on a multi-tenant database: %v, want ErrTenancy", err)
	}
}
