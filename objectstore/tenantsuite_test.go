package objectstore_test

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/storetest"
)

func TestTenantSuite(t *testing.T) {
	t.Run("memblob", func(t *testing.T) {
		storetest.RunTenants(t, func(t *testing.T) memtool.Store {
			return newStore(t, memBucket, "")
		})
	})
	t.Run("fileblob", func(t *testing.T) {
		storetest.RunTenants(t, func(t *testing.T) memtool.Store {
			return newStore(t, fileBucket(t.TempDir()), "")
		})
	})
	if testing.Short() {
		return
	}
	t.Run("s3", func(t *testing.T) {
		srv := startS3(t)
		storetest.RunTenants(t, func(t *testing.T) memtool.Store {
			return srv.open(t, srv.newBucket(t), &objectstore.Options{Prefix: "p"})
		})
	})
}
