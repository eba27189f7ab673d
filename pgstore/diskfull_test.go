package pgstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os/user"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestDiskFull puts the store's tables in a tablespace on a small file
// system: the write that does not fit fails with ErrNoSpace (PostgreSQL's
// disk_full) and changes nothing, and every acknowledged file reads back
// whole. It needs root and a server on this machine, to mount the file
// system and hand it to the server's user.
func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		pgtest.Unavailable(t, "the server is not on this machine, so it cannot use a file system of the test's")
	}
	owner, err := user.Lookup("postgres")
	if err != nil {
		pgtest.Unavailable(t, "no postgres user to own the tablespace: "+err.Error())
	}
	dir := hostfault.Tmpfs(t, fmt.Sprintf("size=1m,mode=0700,uid=%s,gid=%s", owner.Uid, owner.Gid))
	admin := connect(t, base)
	tablespace := fmt.Sprintf("memtool_test_full_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE TABLESPACE "+tablespace+" LOCATION '"+dir+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, "DROP TABLESPACE "+tablespace); err != nil {
			t.Errorf("dropping the tablespace: %v", err)
		}
	})
	// The store's schema is dropped (by pgtest) before the tablespace.
	s := openWith(t, pgtest.URL(t)+"&default_tablespace="+tablespace, short)

	contents := map[string][]byte{}
	full := false
	for i := 0; i < 40 && !full; i++ {
		name := fmt.Sprintf("f%02d", i)
		data := make([]byte, 100<<10)
		rand.Read(data) // incompressible, so that it takes its size
		switch err := s.WriteFile(ctx, name, data, memtool.CreateOnly); {
		case err == nil:
			contents[name] = data
		case errors.Is(err, memtool.ErrNoSpace):
			full = true
			if storeops.Exists(ctx, s, name) {
				t.Errorf("the write that found the disk full left %s behind", name)
			}
		default:
			t.Fatalf("write %s: %v, want nil or ErrNoSpace", name, err)
		}
	}
	if !full || len(contents) == 0 {
		t.Fatalf("%d files of 100 KiB written to a 1 MiB tablespace, full: %v", len(contents), full)
	}
	for name, want := range contents {
		if got, err := s.ReadFile(ctx, name, 1<<20); err != nil || !bytes.Equal(got, want) {
			t.Errorf("acknowledged %s reads back %d bytes, %v", name, len(got), err)
		}
	}
}
