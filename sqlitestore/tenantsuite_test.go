package sqlitestore_test

import (
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

func TestTenantSuite(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) memtool.Store {
		return open(t, filepath.Join(t.TempDir(), "m.db"))
	})
}
