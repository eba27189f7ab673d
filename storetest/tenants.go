package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// RunTenants checks the memtool.Tenanted and memtool.TenantLister contracts
// of a multi-tenant store, then runs the conformance suite (Run) on one
// tenant of a store whose other tenants hold files. newStore is called for
// every subtest and must return a new, unused store that implements
// memtool.Tenanted; TenantLister is checked when the store has it. Each
// subtest of the suite must leave the tenant's neighbour as it was.
func RunTenants(t *testing.T, newStore func(t *testing.T) memtool.Store) {
	t.Helper()
	tenanted := func(t *testing.T) memtool.Tenanted {
		s := newStore(t)
		ts, ok := s.(memtool.Tenanted)
		if !ok {
			t.Fatalf("%T does not implement memtool.Tenanted", s)
		}
		return ts
	}
	t.Run("Isolation", func(t *testing.T) { testTenantIsolation(t, tenanted(t)) })
	t.Run("InvalidIDs", func(t *testing.T) { testTenantInvalidIDs(t, tenanted(t)) })
	t.Run("MultiTenantForGood", func(t *testing.T) { testMultiTenantForGood(t, tenanted(t)) })
	t.Run("SingleTenantForGood", func(t *testing.T) { testSingleTenantForGood(t, newStore(t)) })
	t.Run("ReadsClaimNothing", func(t *testing.T) { testReadsClaimNothing(t, newStore(t)) })
	t.Run("List", func(t *testing.T) { testTenantList(t, tenanted(t)) })
	t.Run("Conformance", func(t *testing.T) {
		// The neighbour holds entries of the names the suite uses, and
		// must hold them still after each subtest: a store whose writes,
		// updates or removals reach past the tenant loses another
		// tenant's data even when each tenant reads only its own.
		var neighbour memtool.Store
		var before tree
		run(t, func(t *testing.T) memtool.Store {
			s := tenanted(t)
			neighbour = tenant(t, s, "neighbour")
			before = makeTree(t, neighbour, neighbourFiles)
			return tenant(t, s, "t1")
		}, func(t *testing.T) {
			if diffs := changes(before, snapshot(t, neighbour)); diffs != nil {
				t.Errorf("this subtest's calls on tenant t1 changed tenant neighbour's entries:\n%s", strings.Join(diffs, "\n"))
			}
		})
	})
}

// neighbourFiles is what the neighbour of the tenant under test holds:
// entries of the names the suite writes, updates, renames and removes,
// and of names it expects to be missing.
var neighbourFiles = tree{
	"f": "file:the neighbour's f", "g": "file:the neighbour's g", "a": "file:the neighbour's a",
	"ten": "file:the neighbour's ten", "log": "file:the neighbour's log", "dst": "file:the neighbour's dst",
	"a.txt": "file:the neighbour's", "d": "dir", "d/x": "file:the neighbour's d/x",
	"d/f": "file:the neighbour's d/f", "d/g": "file:the neighbour's d/g", "d/a.txt": "file:the neighbour's",
	"empty": "dir", "nope": "dir", "nope/x": "file:the neighbour's nope/x",
}

func tenant(t *testing.T, s memtool.Tenanted, id string) memtool.Store {
	t.Helper()
	ts, err := s.Tenant(context.Background(), id)
	if err != nil {
		t.Fatalf("Tenant(%q): %v", id, err)
	}
	return ts
}

// testTenantIsolation: what one tenant writes, renames and removes is
// invisible to another, which can use the same names for its own entries.
func testTenantIsolation(t *testing.T, s memtool.Tenanted) {
	ctx := context.Background()
	a, b := tenant(t, s, "alice"), tenant(t, s, "bob")
	mustMkdir(t, a, "d")
	mustWrite(t, a, "d/x.txt", "alice")
	mustWrite(t, a, "y.txt", "alice")
	before := snapshot(t, a)
	checkEntries(t, b, "", nil)
	checkMissing(t, b, "d")
	checkMissing(t, b, "y.txt")
	if _, err := b.ReadFile(ctx, "d/x.txt", noLimit); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("bob read alice's file: %v, want ErrNotExist", err)
	}
	mustMkdir(t, b, "d")
	mustWrite(t, b, "d/x.txt", "bob")
	wantNoErr(t, "bob WriteFile y.txt", b.WriteFile(ctx, "y.txt", []byte("bob"), memtool.CreateOnly))
	wantNoErr(t, "bob Remove d/x.txt", b.Remove(ctx, "d/x.txt"))
	if r, ok := b.(memtool.Renamer); ok && memtool.Has[memtool.Renamer](b) {
		wantNoErr(t, "bob Rename y.txt", r.Rename(ctx, "y.txt", "z.txt"))
	}
	if ra, ok := b.(memtool.RemoveAller); ok && memtool.Has[memtool.RemoveAller](b) {
		wantNoErr(t, "bob RemoveAll d", ra.RemoveAll(ctx, "d"))
	}
	unchanged(t, a, before, "bob's changes")
	checkFile(t, a, "d/x.txt", "alice")
}

// testTenantInvalidIDs: an id that ValidateTenant refuses names no tenant.
func testTenantInvalidIDs(t *testing.T, s memtool.Tenanted) {
	for _, id := range []string{"", ".", "..", "../x", "a/b", "A", "-a", "a b", "a\x00", string(make([]byte, memtool.MaxTenantLen+1))} {
		if ts, err := s.Tenant(context.Background(), id); err == nil {
			t.Errorf("Tenant(%q) = %T, nil; want an error", id, ts)
		}
	}
}

// testMultiTenantForGood: once a tenant is named, the tenant-less view
// fails every method with ErrTenancy.
func testMultiTenantForGood(t *testing.T, s memtool.Tenanted) {
	ctx := context.Background()
	mustWrite(t, tenant(t, s, "t1"), "a.txt", "t1")
	plain := s.(memtool.Store)
	_, err := plain.Stat(ctx, "a.txt")
	WantErr(t, "tenant-less Stat", err, memtool.ErrTenancy)
	_, err = plain.ReadDir(ctx, "")
	WantErr(t, "tenant-less ReadDir", err, memtool.ErrTenancy)
	_, err = plain.ReadFile(ctx, "a.txt", noLimit)
	WantErr(t, "tenant-less ReadFile", err, memtool.ErrTenancy)
	WantErr(t, "tenant-less WriteFile", plain.WriteFile(ctx, "b.txt", []byte("x"), memtool.CreateOnly), memtool.ErrTenancy)
	WantErr(t, "tenant-less Mkdir", plain.Mkdir(ctx, "d"), memtool.ErrTenancy)
	WantErr(t, "tenant-less Remove", plain.Remove(ctx, "a.txt"), memtool.ErrTenancy)
	WantErr(t, "tenant-less WriteFile(Replace)", plain.WriteFile(ctx, "a.txt", []byte("x"), memtool.Replace), memtool.ErrTenancy)
	WantErr(t, "tenant-less Update", plain.Update(ctx, "a.txt", noLimit, func([]byte) ([]byte, error) { return []byte("x"), nil }), memtool.ErrTenancy)
	if r, ok := plain.(memtool.Renamer); ok && memtool.Has[memtool.Renamer](plain) {
		WantErr(t, "tenant-less Rename", r.Rename(ctx, "a.txt", "c.txt"), memtool.ErrTenancy)
	}
	if r, ok := plain.(memtool.RemoveAller); ok && memtool.Has[memtool.RemoveAller](plain) {
		WantErr(t, "tenant-less RemoveAll", r.RemoveAll(ctx, "a.txt"), memtool.ErrTenancy)
	}
	checkFile(t, tenant(t, s, "t1"), "a.txt", "t1")
	checkEntries(t, tenant(t, s, "t1"), "", []memtool.FileInfo{file("a.txt", 2)})
}

// testSingleTenantForGood: once used without a tenant, a store names none.
func testSingleTenantForGood(t *testing.T, s memtool.Store) {
	ctx := context.Background()
	mustWrite(t, s, "a.txt", "plain")
	ts, ok := s.(memtool.Tenanted)
	if !ok {
		t.Fatalf("%T does not implement memtool.Tenanted", s)
	}
	_, err := ts.Tenant(ctx, "t1")
	WantErr(t, "Tenant on a single-tenant store", err, memtool.ErrTenancy)
	if l, ok := s.(memtool.TenantLister); ok && memtool.Has[memtool.TenantLister](s) {
		_, err := l.Tenants(ctx)
		WantErr(t, "Tenants on a single-tenant store", err, memtool.ErrTenancy)
	}
	checkFile(t, s, "a.txt", "plain")
}

// testReadsClaimNothing: reading the tenant-less view of an unused store
// (as a look at it does: memtool info, a view) finds it empty and decides
// nothing; a tenant can still be named afterwards, and the tenant-less
// view then fails with ErrTenancy.
func testReadsClaimNothing(t *testing.T, s memtool.Store) {
	ctx := context.Background()
	if fi, err := s.Stat(ctx, ""); err != nil || !fi.IsDir() {
		t.Fatalf("Stat of an unused store's root = %+v, %v", fi, err)
	}
	if es, err := s.ReadDir(ctx, ""); err != nil || len(es) != 0 {
		t.Fatalf("ReadDir of an unused store's root = %v, %v; want it empty", es, err)
	}
	_, err := s.ReadFile(ctx, "a.txt", noLimit)
	WantErr(t, "ReadFile on an unused store", err, memtool.ErrNotExist)
	ts, ok := s.(memtool.Tenanted)
	if !ok {
		t.Fatalf("%T does not implement memtool.Tenanted", s)
	}
	mustWrite(t, tenant(t, ts, "t1"), "a.txt", "t1")
	_, err = s.ReadFile(ctx, "a.txt", noLimit)
	WantErr(t, "tenant-less ReadFile once a tenant is named", err, memtool.ErrTenancy)
}

// testTenantList: the tenants that hold something, once each, in byte order.
func testTenantList(t *testing.T, s memtool.Tenanted) {
	l, ok := s.(memtool.TenantLister)
	if !ok || !memtool.Has[memtool.TenantLister](s.(memtool.Store)) {
		t.Skipf("%T does not implement memtool.TenantLister", s)
	}
	ctx := context.Background()
	if ids, err := l.Tenants(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("Tenants of an unused store = %q, %v; want none", ids, err)
	}
	for _, id := range []string{"b-2", "a1", "c", "a1", "a.1"} {
		ts := tenant(t, s, id)
		if err := ts.Mkdir(ctx, "d"); err != nil && !errors.Is(err, memtool.ErrExist) {
			t.Fatal(err)
		}
	}
	tenant(t, s, "empty")
	ids, err := l.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "empty" }) // may be listed or not
	if want := []string{"a.1", "a1", "b-2", "c"}; !slices.Equal(ids, want) {
		t.Errorf("Tenants = %q, want %q", ids, want)
	}
}
