package objectstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
)

// TestNestedPrefixRefused: a store whose prefix lies in another store's
// memory (PREFIX/f/… or PREFIX/tenants/…) of the same bucket is refused
// on its first use, as the package documentation says different prefixes
// are independent stores. Such a store once opened as any other: the one
// at p/tenants/t was tenant t's memory under another name (it listed,
// read and wrote t's files), and the files of the one at p/f/x showed in
// the memory at p as a directory x. Prefixes beside a store stay free.
func TestNestedPrefixRefused(t *testing.T) {
	ctx := context.Background()
	srv := startS3(t)
	name := srv.newBucket(t)
	open := func(prefix string) *objectstore.Store { return srv.open(t, name, &objectstore.Options{Prefix: prefix}) }

	multi := open("p")
	alice, err := multi.Tenant(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.WriteFile(ctx, "secret.md", []byte("alice's"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	single := open("q")
	if err := single.WriteFile(ctx, "top.md", []byte("q's"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}

	for _, prefix := range []string{"p/tenants/alice", "p/tenants/bob", "p/f/x", "/q/f/", "q/f/a/b", "p/tenants/alice/f/y", "q/tenants/t"} {
		s := open(prefix)
		entries, err := s.ReadDir(ctx, "")
		if err == nil || !strings.Contains(err.Error(), "inside") {
			t.Errorf("prefix %s: ReadDir = %v, %v; want it refused", prefix, entries, err)
		}
		if err := s.WriteFile(ctx, "new.md", []byte("x"), memtool.CreateOnly); err == nil {
			t.Errorf("prefix %s: WriteFile succeeded", prefix)
		}
		if _, err := s.Tenant(ctx, "t"); err == nil {
			t.Errorf("prefix %s: Tenant succeeded", prefix)
		}
	}
	if got, err := single.ReadDir(ctx, ""); err != nil || len(got) != 1 {
		t.Errorf("the store at q lists %v, %v; want only top.md", got, err)
	}
	if got, err := alice.ReadDir(ctx, ""); err != nil || len(got) != 1 {
		t.Errorf("alice's memory lists %v, %v; want only secret.md", got, err)
	}
	// Beside a store, or in a bucket whose top holds no store, a prefix
	// named like the layout is free.
	for _, prefix := range []string{"p2", "p/backup", "tenants/alice", "f/x", "p/tenantsx/f"} {
		s := open(prefix)
		if err := s.WriteFile(ctx, "ok.md", []byte("x"), memtool.CreateOnly); err != nil {
			t.Errorf("prefix %s: %v", prefix, err)
		}
	}
}
