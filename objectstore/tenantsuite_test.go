package objectstore_test

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
	"gocloud.dev/blob/memblob"
)

func TestTenantSuite(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) memtool.Store {
		return newStore(t, memblob.OpenBucket(nil), nil)
	})
}
