package backendtest_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/limits"
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

// RunWrapper gives the policy a new directory store for each check (or,
// for the checks of a store without capabilities, one hidden by
// storetest.Bare).
func TestRunWrapper(t *testing.T) {
	var mu sync.Mutex
	inners := map[string]int{}
	backendtest.RunWrapper(t, func(t *testing.T, inner memtool.Store) memtool.Store {
		mu.Lock()
		inners[fmt.Sprintf("%T", inner)]++
		mu.Unlock()
		return limits.New(inner, nil)
	}, nil)
	mu.Lock()
	defer mu.Unlock()
	if len(inners) != 2 || inners["*filestore.Store"] == 0 {
		t.Errorf("the wrapped stores were %v, want directory stores and Bare ones", inners)
	}
	for typ := range inners {
		if typ != "*filestore.Store" && !strings.HasPrefix(typ, "storetest.") {
			t.Errorf("a wrapped store is a %s", typ)
		}
	}
}
