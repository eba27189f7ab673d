package backendtest_test

import (
	"testing"

	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/memstore"
)

// Local is memstore and filestore, in that order, and each opens a new,
// empty store of its kind.
func TestLocal(t *testing.T) {
	local := backendtest.Local()
	if len(local) != 2 || local[0].Name != "memstore" || local[1].Name != "filestore" {
		t.Fatalf("Local() = %v, want memstore and filestore", local)
	}
	for _, b := range local {
		s := b.Open(t)
		switch s.(type) {
		case *memstore.Store:
			if b.Name != "memstore" {
				t.Errorf("%s opens a %T", b.Name, s)
			}
		case *filestore.Store:
			if b.Name != "filestore" {
				t.Errorf("%s opens a %T", b.Name, s)
			}
		default:
			t.Errorf("%s opens a %T", b.Name, s)
		}
		if entries, err := s.ReadDir(t.Context(), ""); err != nil || len(entries) != 0 {
			t.Errorf("%s: a new store lists %v, %v; want nothing", b.Name, entries, err)
		}
	}
}
