package objectstore_test

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/storetest"
	"gocloud.dev/blob/memblob"
)

func TestTenantSuite(t *testing.T) {
	t.Run("memblob", func(t *testing.T) {
		storetest.RunTenants(t, func(t *testing.T) memtool.Store {
			return newStore(t, memblob.OpenBucket(nil), nil)
		})
	})
	t.Run("fileblob", func(t *testing.T) {
		storetest.RunTenants(t, func(t *testing.T) memtool.Store {
			return newStore(t, fileBucket(t, t.TempDir()), nil)
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
