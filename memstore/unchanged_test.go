package memstore

import (
	"context"
	"testing"
	"unsafe"

	"github.com/memtool/memtool"
)

// TestUnchangedUpdate: an Update whose fn returns the old content keeps
// the file's bytes where they are (nothing is written); one that changes
// them replaces them.
func TestUnchangedUpdate(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.WriteFile(ctx, "f", []byte("same"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	data := func() *byte {
		n, err := s.lookup("update", "f")
		if err != nil {
			t.Fatal(err)
		}
		return unsafe.SliceData(n.data)
	}
	before := data()
	if err := s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return []byte("same"), nil }); err != nil {
		t.Fatal(err)
	}
	if data() != before {
		t.Errorf("an Update to the same content wrote the file")
	}
	if err := s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return []byte("changed"), nil }); err != nil {
		t.Fatal(err)
	}
	if data() == before {
		t.Errorf("an Update to new content did not write the file")
	}
}
