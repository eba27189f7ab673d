package memstore_test

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) memtool.Store { return memstore.New() })
}
