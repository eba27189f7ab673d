package storetest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/storetest"
)

// brokenWrappers names each defect of a wrapper and the RunWrapper
// subtests that must catch it. The wrapper's policy refuses to write a
// file named "forbidden".
var brokenWrappers = []struct {
	defect string
	caught []string
}{
	{"none", nil}, // the control: a faithful wrapper passes
	{"tenant-unwrapped", []string{"TenantWrapped", "Refusal/Forbidden"}},
	{"refusal-writes", []string{"Refusal/Forbidden"}},
	{"no-refusal", []string{"Refusal/Forbidden"}},
	{"masks-rename", []string{"Conformance/Rename"}},
	{"unsupported-as-error", []string{"Unsupported"}},
	{"no-tenants", []string{"Tenants", "TenantWrapped"}},
}

func TestWrapperSuiteCatchesBrokenWrappers(t *testing.T) {
	if defect, ok := os.LookupEnv(brokenEnv); ok {
		// The child: run the suite on the broken wrapper and let it fail.
		storetest.RunWrapper(t, func(t *testing.T) memtool.Store {
			fs, err := filestore.Open(filepath.Join(t.TempDir(), "m"), nil)
			return storetest.Opened(t, fs, err)
		}, func(t *testing.T, inner memtool.Store) memtool.Store { return newPolicy(inner, defect) }, []storetest.Refusal{
			{Name: "Forbidden", Do: func(ctx context.Context, s memtool.Store) error {
				return s.WriteFile(ctx, "forbidden", []byte("x"), memtool.CreateOnly)
			}},
		})
		return
	}
	for _, bw := range brokenWrappers {
		t.Run(bw.defect, func(t *testing.T) {
			t.Parallel()
			checkCaught(t, "TestWrapperSuiteCatchesBrokenWrappers", bw.defect, bw.caught)
		})
	}
}

// policy is a wrapper that refuses to write "forbidden", broken by defect.
// It passes the Store methods other than WriteFile on as they are.
type policy struct {
	memtool.Store
	memtool.Forwarder
	defect string
}

func newPolicy(inner memtool.Store, defect string) *policy {
	p := &policy{Store: inner, defect: defect}
	p.Forwarder = memtool.Forward(inner, func(t memtool.Store, _ string) memtool.Store {
		if defect == "tenant-unwrapped" {
			return t
		}
		return newPolicy(t, defect)
	})
	return p
}

func (p *policy) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if name != "forbidden" {
		return p.Store.WriteFile(ctx, name, data, mode)
	}
	switch p.defect {
	case "no-refusal":
		return p.Store.WriteFile(ctx, name, data, mode)
	case "refusal-writes":
		p.Store.WriteFile(ctx, name, data, mode)
	}
	return memtool.Refusal("forbidden")
}

func (p *policy) Rename(ctx context.Context, oldname, newname string) error {
	if p.defect == "masks-rename" {
		return memtool.Unsupported("rename", oldname)
	}
	return p.Forwarder.Rename(ctx, oldname, newname)
}

func (p *policy) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	switch p.defect {
	case "unsupported-as-error":
		if _, ok := p.Unwrap().(memtool.Tenanted); !ok {
			return nil, errors.New("no tenants here")
		}
	case "no-tenants":
		return nil, memtool.Unsupported("tenant", id)
	}
	return p.Forwarder.Tenant(ctx, id)
}
