package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

func tenanted(t *testing.T, s memtool.Store) memtool.Tenanted {
	t.Helper()
	ts, ok := s.(memtool.Tenanted)
	if !ok {
		t.Fatalf("%T does not implement memtool.Tenanted", s)
	}
	return ts
}

func tenants(t *testing.T, s memtool.Store) ([]string, error) {
	t.Helper()
	l, ok := s.(memtool.TenantLister)
	if !ok {
		t.Fatalf("%T does not implement memtool.TenantLister", s)
	}
	return l.Tenants(t.Context())
}

func claim(t *testing.T, s memtool.Store, id string) memtool.Store {
	t.Helper()
	ts, err := tenanted(t, s).Tenant(t.Context(), id)
	if err != nil {
		t.Fatalf("Tenant(%q): %v", id, err)
	}
	return ts
}

// A tree the CLI made before tenancy moved here (each tenant a store of its
// own in DIR/.memtool-tenants/ID) opens and lists through the new API, and
// what a tenant writes now lands in that same place.
func TestTenantsOldLayout(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"bob", "alice"} {
		old := open(t, filepath.Join(dir, ".memtool-tenants", id), nil)
		if err := old.WriteFile(t.Context(), "notes.md", []byte(id+"'s notes"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		old.Close()
	}
	s := open(t, dir, nil)
	ids, err := tenants(t, s)
	if want := []string{"alice", "bob"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("Tenants = %q, %v; want %q", ids, err, want)
	}
	alice := claim(t, s, "alice")
	data, err := alice.ReadFile(t.Context(), "notes.md", 100)
	if err != nil || string(data) != "alice's notes" {
		t.Errorf("alice ReadFile(notes.md) = %q, %v", data, err)
	}
	if err := claim(t, s, "carol").WriteFile(t.Context(), "a.txt", []byte("carol"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if got := hostContent(t, filepath.Join(dir, ".memtool-tenants", "carol", "a.txt")); got != "carol" {
		t.Errorf("carol's a.txt on disk = %q", got)
	}
	claim(t, s, "dave") // named, never written
	ids, err = tenants(t, s)
	if want := []string{"alice", "bob", "carol", "dave"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("Tenants = %q, %v; want %q", ids, err, want)
	}
	_, err = s.Stat(t.Context(), "")
	storetest.WantErr(t, "tenant-less Stat", err, memtool.ErrTenancy)
}

// A store opened before a tenant was claimed through another handle (as in
// another process) refuses everything from then on, reads included.
func TestTenantlessViewRefusesAfterClaim(t *testing.T) {
	dir := t.TempDir()
	plain, other := open(t, dir, nil), open(t, dir, nil)
	ctx := t.Context()
	if _, err := plain.ReadDir(ctx, ""); err != nil {
		t.Fatalf("ReadDir of an unused store: %v", err)
	}
	if err := claim(t, other, "t1").WriteFile(ctx, "a.txt", []byte("t1"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	_, err := plain.ReadDir(ctx, "")
	storetest.WantErr(t, "ReadDir", err, memtool.ErrTenancy)
	storetest.WantErr(t, "WriteFile", plain.WriteFile(ctx, "b.txt", []byte("x"), memtool.Replace), memtool.ErrTenancy)
	storetest.WantErr(t, "Update", plain.Update(ctx, "a.txt", 100, func(b []byte) ([]byte, error) { return b, nil }), memtool.ErrTenancy)
	storetest.WantErr(t, "Rename", plain.Rename(ctx, "a.txt", "b.txt"), memtool.ErrTenancy)
	storetest.WantErr(t, "RemoveAll", plain.RemoveAll(ctx, "a.txt"), memtool.ErrTenancy)
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 2 {
		t.Errorf("store directory holds %v, %v; want only the lock and the tenants", entries, err)
	}
}

// Whichever handle comes first decides: a tenant-less write, then no
// tenant; a tenant, then no tenant-less write.
func TestTenancyAcrossHandles(t *testing.T) {
	ctx := t.Context()
	t.Run("WriteFirst", func(t *testing.T) {
		dir := t.TempDir()
		plain, other := open(t, dir, nil), open(t, dir, nil)
		if err := plain.WriteFile(ctx, "a.txt", []byte("plain"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		_, err := tenanted(t, other).Tenant(ctx, "t1")
		storetest.WantErr(t, "Tenant", err, memtool.ErrTenancy)
		_, err = tenants(t, other)
		storetest.WantErr(t, "Tenants", err, memtool.ErrTenancy)
		if _, err := os.Lstat(filepath.Join(dir, ".memtool-tenants")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused claim left the tenants directory: %v", err)
		}
	})
	t.Run("ClaimFirst", func(t *testing.T) {
		dir := t.TempDir()
		plain, other := open(t, dir, nil), open(t, dir, nil)
		claim(t, other, "t1")
		storetest.WantErr(t, "WriteFile", plain.WriteFile(ctx, "a.txt", []byte("plain"), memtool.CreateOnly), memtool.ErrTenancy)
		storetest.WantErr(t, "Mkdir", plain.Mkdir(ctx, "d"), memtool.ErrTenancy)
	})
}

// A tenant-less write and a claim racing on two handles of one fresh
// directory: exactly one of them wins, every time.
func TestTenancyRace(t *testing.T) {
	ctx := t.Context()
	for round := range 40 {
		dir := filepath.Join(t.TempDir(), "store")
		plain, other := open(t, dir, nil), open(t, dir, nil)
		var writeErr, claimErr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			writeErr = plain.WriteFile(ctx, "a.txt", []byte("plain"), memtool.CreateOnly)
		}()
		go func() {
			defer wg.Done()
			_, claimErr = tenanted(t, other).Tenant(ctx, "t1")
		}()
		wg.Wait()
		if (writeErr == nil) == (claimErr == nil) {
			t.Fatalf("round %d: tenant-less write: %v; claim: %v; want exactly one to succeed", round, writeErr, claimErr)
		}
		for _, err := range []error{writeErr, claimErr} {
			if err != nil && !errors.Is(err, memtool.ErrTenancy) {
				t.Fatalf("round %d: %v, want ErrTenancy", round, err)
			}
		}
		plain.Close()
		other.Close()
	}
}

// What a tenant-less memory's policies keep (.memtool-history,
// .memtool-expiry*) is the memory's: a directory holding it gets no tenant.
// The store's own files (lock, temp files, trash) are not.
func TestTenancyReservedNames(t *testing.T) {
	for _, name := range []string{".memtool-history/v1", ".memtool-expiry.json", ".memtool-expiry/x", "visible.md"} {
		dir := t.TempDir()
		writeHostFile(t, filepath.Join(dir, name), "x")
		_, err := tenanted(t, open(t, dir, nil)).Tenant(t.Context(), "t1")
		storetest.WantErr(t, "Tenant beside "+name, err, memtool.ErrTenancy)
	}
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, ".memtool-tmp-0123"), "x")
	writeHostFile(t, filepath.Join(dir, ".memtool-trash-0123/f"), "x")
	claim(t, open(t, dir, nil), "t1")
}

// Each Tenant call begins a use of the tenant's store, and its Close ends
// one: the last closes it (its descriptors), and the next Tenant call
// opens it again. Closing the parent closes them all. A tenant has no
// tenants.
func TestTenantStoreOwnership(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	closeStore := func(st memtool.Store) {
		t.Helper()
		if err := st.(interface{ Close() error }).Close(); err != nil {
			t.Fatalf("tenant Close: %v", err)
		}
	}
	t1 := claim(t, s, "t1")
	if again := claim(t, s, "t1"); again != t1 {
		t.Errorf("a second Tenant(t1) gave another store")
	}
	closeStore(t1) // one use of two ends: t1 stays open
	if err := t1.WriteFile(ctx, "a.txt", []byte("x"), memtool.CreateOnly); err != nil {
		t.Fatalf("WriteFile after one of two uses ended: %v", err)
	}
	real, err := filepath.EvalSymlinks(dir) // as /proc names it
	if err != nil {
		t.Fatal(err)
	}
	tenantDir := filepath.Join(real, filestore.TenantsDir, "t1")
	if n := openFDs(t, tenantDir); n != 2 {
		t.Errorf("%d descriptors open on the tenant's directory, want 2", n)
	}
	closeStore(t1)
	if _, err := t1.Stat(ctx, "a.txt"); err == nil {
		t.Errorf("Stat after the last use ended succeeded")
	}
	if n := openFDs(t, tenantDir); n != 0 {
		t.Errorf("%d descriptors open on the tenant's directory after its store closed", n)
	}
	closeStore(t1) // one Close too many changes nothing
	reopened := claim(t, s, "t1")
	if reopened == t1 {
		t.Errorf("Tenant(t1) after its store closed gave the closed store")
	}
	if data, err := reopened.ReadFile(ctx, "a.txt", 1<<10); err != nil || string(data) != "x" {
		t.Errorf("the reopened tenant reads %q, %v", data, err)
	}
	_, err = tenanted(t, reopened).Tenant(ctx, "sub")
	storetest.WantErr(t, "Tenant of a tenant", err, memtool.ErrTenancy)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := reopened.Stat(ctx, "a.txt"); err == nil {
		t.Errorf("tenant Stat after the parent's Close succeeded")
	}
	closeStore(reopened) // after the parent's Close: nothing to do
	if _, err := tenanted(t, s).Tenant(ctx, "t2"); err == nil {
		t.Errorf("Tenant after Close succeeded")
	}
}

// openFDs counts this process's descriptors open on path.
func openFDs(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// A tenants directory that is a link out of the store is not followed.
func TestTenantsDirLinkOut(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, ".memtool-tenants")); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	if _, err := tenanted(t, s).Tenant(context.Background(), "t1"); err == nil {
		t.Errorf("Tenant through a link out of the store succeeded")
	}
	if err := os.Mkdir(filepath.Join(outside, "t2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if ids, err := tenants(t, s); err == nil {
		t.Errorf("Tenants through a link out of the store = %q", ids)
	}
	if _, err := os.Lstat(filepath.Join(outside, "t1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the claim wrote outside the store: %v", err)
	}
}

// The recovery of a directory with tenants leaves the tenants' directories
// alone: each is its own store with its own lock, and a temp file there
// may be a live writer's.
func TestRecoverSkipsTenants(t *testing.T) {
	dir := t.TempDir()
	claim(t, open(t, dir, nil), "t1")
	tmp := filepath.Join(dir, ".memtool-tenants", "t1", ".memtool-tmp-0123")
	writeHostFile(t, tmp, "a tenant's write in progress")
	writeHostFile(t, filepath.Join(dir, ".memtool.lock"), "dirty\n")
	writeHostFile(t, filepath.Join(dir, ".memtool-tmp-4567"), "the parent's debris")
	open(t, dir, nil)
	if _, err := os.Lstat(filepath.Join(dir, ".memtool-tmp-4567")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the parent's debris is still there: %v", err)
	}
	if _, err := os.Lstat(tmp); err != nil {
		t.Errorf("the parent's recovery swept a tenant's temp file: %v", err)
	}
}

// A directory where a tenant-less memory and tenants were both made (by
// hand, or by a version that decided without the lock) is refused by the
// tenant-less view and by Tenant; Tenants lists its tenants, named but
// never written ones included.
func TestTenancyMixed(t *testing.T) {
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "plain.md"), "plain")
	if err := os.MkdirAll(filepath.Join(dir, ".memtool-tenants", "t1"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	_, err := s.Stat(t.Context(), "plain.md")
	storetest.WantErr(t, "tenant-less Stat", err, memtool.ErrTenancy)
	_, err = tenanted(t, s).Tenant(t.Context(), "t1")
	storetest.WantErr(t, "Tenant", err, memtool.ErrTenancy)
	if ids, err := tenants(t, s); err != nil || !slices.Equal(ids, []string{"t1"}) {
		t.Errorf("Tenants = %q, %v; want [t1]", ids, err)
	}
	if got := hostContent(t, filepath.Join(dir, "plain.md")); got != "plain" {
		t.Errorf("plain.md = %q", got)
	}
}

// A tenant's store has its own lock (a writer holding the parent's does
// not hold it up) and its own crash recovery, at its first Tenant call.
func TestTenantOwnLockAndRecovery(t *testing.T) {
	dir := t.TempDir()
	claim(t, open(t, dir, nil), "t1")
	tdir := filepath.Join(dir, ".memtool-tenants", "t1")
	writeHostFile(t, filepath.Join(tdir, ".memtool.lock"), "dirty\n")
	writeHostFile(t, filepath.Join(tdir, ".memtool-tmp-0123"), "debris")

	parent, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	if err := syscall.Flock(int(parent.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, &filestore.Options{BusyTimeout: -1})
	t1 := claim(t, s, "t1")
	if _, err := os.Lstat(filepath.Join(tdir, ".memtool-tmp-0123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the tenant's debris is still there: %v", err)
	}
	if err := t1.WriteFile(t.Context(), "a.txt", []byte("t1"), memtool.CreateOnly); err != nil {
		t.Errorf("tenant WriteFile while the parent's lock is held: %v", err)
	}
}

// A FIFO or a device where a tenant's directory should be is refused at
// once, without being opened (an open of a FIFO waits for a writer, and
// Tenant would hold every other tenant's first call with it); the other
// tenants are served.
func TestTenantDirNotADirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, nil)
	claim(t, s, "first")
	must.Succeed(t, syscall.Mkfifo(filepath.Join(dir, filestore.TenantsDir, "pipe"), 0o600))
	err := storetest.Answer(t, "Tenant whose directory is a FIFO", func() error {
		_, err := tenanted(t, s).Tenant(ctx, "pipe")
		return err
	})
	if err == nil {
		t.Error("Tenant whose directory is a FIFO succeeded")
	}
	if os.Geteuid() == 0 {
		must.Succeed(t, unix.Mknod(filepath.Join(dir, filestore.TenantsDir, "dev"), unix.S_IFCHR|0o600, int(unix.Mkdev(240, 77))))
		if _, err := tenanted(t, s).Tenant(ctx, "dev"); err == nil {
			t.Error("Tenant whose directory is a device succeeded")
		}
	}
	second := claim(t, s, "second")
	if err := second.WriteFile(ctx, "a.md", []byte("a"), memtool.CreateOnly); err != nil {
		t.Error(err)
	}
}

// TestTenantDirLinkedToAnother: a tenant's directory that is a link to
// another tenant's, inside the store (made outside memtool, which never
// makes links), is refused: one tenant never reads or writes another's
// memory through it.
func TestTenantDirLinkedToAnother(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, nil)
	bob := claim(t, s, "bob")
	if err := bob.WriteFile(ctx, "secret.md", []byte("bob's"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	must.Succeed(t, os.Symlink("bob", filepath.Join(dir, filestore.TenantsDir, "alice")))
	for _, st := range []*filestore.Store{s, open(t, dir, nil)} {
		alice, err := tenanted(t, st).Tenant(ctx, "alice")
		if !errors.Is(err, memtool.ErrEscapes) {
			t.Fatalf("Tenant whose directory links to another's: %v, want ErrEscapes", err)
		}
		if alice != nil {
			t.Fatalf("Tenant gave a store: %v", alice)
		}
	}
	if data, err := bob.ReadFile(ctx, "secret.md", 1<<20); err != nil || string(data) != "bob's" {
		t.Fatalf("bob's file: %q, %v", data, err)
	}
}

// A tenant's directory swapped for a link to another tenant's by another
// process between Tenant's look at it and its open (the host's rename, at
// the worst moment) does not give one tenant the other's memory: Tenant
// refuses, as it refuses such a link found in place.
func TestTenantDirSwappedForLink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir, nil)
	var armed atomic.Bool
	tenantsDir := filepath.Join(dir, filestore.TenantsDir)
	filestore.SetHooks(s, filestore.Hooks{TenantOpen: func() {
		if armed.CompareAndSwap(true, false) {
			must.Succeed(t, os.Rename(filepath.Join(tenantsDir, "alice"), filepath.Join(dir, "alice-away")))
			must.Succeed(t, os.Symlink("bob", filepath.Join(tenantsDir, "alice")))
		}
	}})
	bob := claim(t, s, "bob")
	if err := bob.WriteFile(ctx, "secret.md", []byte("bob's"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	must.Succeed(t, os.Mkdir(filepath.Join(tenantsDir, "alice"), 0o700))
	armed.Store(true)
	alice, err := tenanted(t, s).Tenant(ctx, "alice")
	if armed.Load() {
		t.Fatal("the hook did not run")
	}
	if alice != nil {
		data, rerr := alice.ReadFile(ctx, "secret.md", 1<<20)
		t.Fatalf("Tenant(alice) with its directory swapped for a link to bob's gave a store (error %v); its secret.md: %q, %v", err, data, rerr)
	}
	if !errors.Is(err, memtool.ErrEscapes) {
		t.Errorf("Tenant(alice) with its directory swapped for a link: %v, want ErrEscapes", err)
	}
}

// The directories that make a store multi-tenant and give a tenant its
// memory count only once fsynced into place. When that fsync fails, the
// call fails, and the next call, finding the directory there, fsyncs it
// before it answers: the claim's (the store's directory) and the
// tenant's (.memtool-tenants) each once.
func TestTenantDirectoriesSyncedAfterAFailure(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), nil)
	var syncs atomic.Int32
	var failAt atomic.Int32 // the failing fsync's number; 0 for none
	filestore.SetHooks(s, filestore.Hooks{DirSyncErr: func() error {
		if n := syncs.Add(1); n == failAt.Load() {
			return syscall.EIO
		}
		return nil
	}})
	try := func(id string, fail int32) error {
		syncs.Store(0)
		failAt.Store(fail)
		_, err := s.Tenant(ctx, id)
		return err
	}
	if err := try("a", 1); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Tenant(a) with the claim's fsync failing: %v", err)
	}
	if err := try("a", 0); err != nil || syncs.Load() != 2 {
		t.Errorf("Tenant(a) again: %v after %d fsyncs, want 2 (the claim's, the tenant's)", err, syncs.Load())
	}
	if err := try("b", 1); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Tenant(b) with its fsync failing: %v", err)
	}
	if err := try("b", 0); err != nil || syncs.Load() != 1 {
		t.Errorf("Tenant(b) again: %v after %d fsyncs, want 1 (the tenant's)", err, syncs.Load())
	}
}

// Uses of one tenant's store that begin and end at the same time in many
// goroutines never see it closed under them: each works until its own
// Close, and the store closes when the last ends.
func TestTenantUsesOverlap(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				ts, err := tenanted(t, s).Tenant(ctx, "t1")
				if err != nil {
					t.Error(err)
					return
				}
				name := fmt.Sprintf("g%d.md", g)
				if err := ts.WriteFile(ctx, name, []byte(fmt.Sprint(i)), memtool.Replace); err != nil {
					t.Errorf("goroutine %d, use %d: %v", g, i, err)
				}
				if _, err := ts.ReadFile(ctx, name, 1<<10); err != nil {
					t.Errorf("goroutine %d, use %d: %v", g, i, err)
				}
				if err := ts.(interface{ Close() error }).Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}
