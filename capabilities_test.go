package memtool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// bare hides memstore's optional capabilities.
type bare struct{ memtool.Store }

func TestWithCapabilitiesOf(t *testing.T) {
	ctx := context.Background()
	errRename, errRemoveAll := errors.New("rename called"), errors.New("removeAll called")
	rename := func(context.Context, string, string) error { return errRename }
	removeAll := func(context.Context, string) error { return errRemoveAll }
	full := memstore.New()
	for _, tc := range []struct {
		name   string
		inner  memtool.Store
		rn, ra bool
	}{
		{"both", full, true, true},
		{"none", bare{full}, false, false},
		{"rename only", struct {
			memtool.Store
			memtool.Renamer
		}{full, full}, true, false},
		{"removeAll only", struct {
			memtool.Store
			memtool.RemoveAller
		}{full, full}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memtool.WithCapabilitiesOf(tc.inner, bare{full}, rename, removeAll)
			r, rn := s.(memtool.Renamer)
			a, ra := s.(memtool.RemoveAller)
			if rn != tc.rn || ra != tc.ra {
				t.Fatalf("Renamer %v, RemoveAller %v; want %v, %v", rn, ra, tc.rn, tc.ra)
			}
			if rn && r.Rename(ctx, "a", "b") != errRename {
				t.Error("Rename did not call rename")
			}
			if ra && a.RemoveAll(ctx, "a") != errRemoveAll {
				t.Error("RemoveAll did not call removeAll")
			}
			// The Store methods reach the wrapped store.
			if err := s.Mkdir(ctx, "d-"+tc.name); err != nil {
				t.Fatal(err)
			}
			if fi, err := full.Stat(ctx, "d-"+tc.name); err != nil || !fi.IsDir() {
				t.Errorf("Mkdir through the result: %v, %v", fi, err)
			}
		})
	}
}
