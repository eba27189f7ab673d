package filestore_test

import (
	"context"
	"testing"

	"github.com/memtool/memtool"
)

// An Update whose fn panics releases the store's lock as the panic goes
// on: a caller that recovers it (an HTTP server recovers each request's)
// can write again, and so can every other writer.
func TestUpdatePanicReleasesLock(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), nil)
	if err := s.WriteFile(ctx, "a", []byte("one"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the fn's panic", p)
			}
		}()
		s.Update(ctx, "a", 1<<20, func([]byte) ([]byte, error) { panic("boom") })
	}()
	if err := s.WriteFile(ctx, "b", []byte("two"), memtool.CreateOnly); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
	if data, err := s.ReadFile(ctx, "a", 1<<20); err != nil || string(data) != "one" {
		t.Errorf("a: %q, %v", data, err)
	}
}
