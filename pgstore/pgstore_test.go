package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy/tenancytest"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

// open opens the store at url with the default Options.
func open(t *testing.T, url string) *pgstore.Store { return openWith(t, url, pgstore.Options{}) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		return open(t, pgtest.URL(t))
	})
}

func TestTenantSuite(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) memtool.Store {
		return open(t, pgtest.URL(t))
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

// TestTenancy runs the tenancy checks RunTenants lacks (see tenancytest).
func TestTenancy(t *testing.T) {
	tenancytest.Check(t, func(t *testing.T) tenancytest.Opener {
		url := pgtest.URL(t)
		return func(t *testing.T) tenancytest.Store { return open(t, url) }
	})
}
