package pgstore_test

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

func TestTenantSuite(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) memtool.Store {
		return open(t, pgtest.URL(t))
	})
}
