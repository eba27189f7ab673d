package memstore

import (
	"testing"
	"unsafe"

	"github.com/memtool/memtool/internal/storeops"
)

// TestUnchangedUpdate: an Update whose fn returns the old content keeps
// the file's bytes where they are (nothing is written).
func TestUnchangedUpdate(t *testing.T) {
	s := New()
	storeops.CheckUnchangedUpdate(t, s, "f", func() any {
		n, err := s.lookup("update", "f")
		if err != nil {
			t.Fatal(err)
		}
		return unsafe.SliceData(n.data)
	})
}
