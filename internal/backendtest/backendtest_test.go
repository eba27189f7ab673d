package backendtest_test

import (
	"fmt"
	"path"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
)

// Local is memstore and filestore, in that order (TestOnLocal opens them).
func TestLocal(t *testing.T) {
	local := backendtest.Local()
	if len(local) != 2 || local[0].Name != "memstore" || local[1].Name != "filestore" {
		t.Fatalf("Local() = %v, want memstore and filestore", local)
	}
}

// OnLocal runs fn once for each Local backend, in a subtest of its name,
// on a new, empty store of it.
func TestOnLocal(t *testing.T) {
	var ran []string
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ran = append(ran, path.Base(t.Name())+" "+fmt.Sprintf("%T", inner))
		if entries, err := inner.ReadDir(t.Context(), ""); err != nil || len(entries) != 0 {
			t.Errorf("a new store lists %v, %v; want nothing", entries, err)
		}
		// Each run gets its own store: this file is not in the next one.
		if err := inner.WriteFile(t.Context(), "f", []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	})
	if want := []string{"memstore *memstore.Store", "filestore *filestore.Store"}; !slices.Equal(ran, want) {
		t.Errorf("OnLocal ran %q, want %q", ran, want)
	}
}
