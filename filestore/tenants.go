// This file holds tenancy: the tenants' stores in .memtool-tenants, the
// claim of a directory, the tenant-less view's refusal, and Tenants.

package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

// TenantsDir holds the tenants of a multi-tenant directory: tenant ID's
// memory is the store in TenantsDir/ID. Its name starts with ".memtool", so
// the path gate keeps every command out of it, and ReadDir never shows it.
const TenantsDir = ".memtool-tenants"

// ownName reports whether a name in a store's directory belongs to the
// store's machinery (the lock, temp files, trash, the tenants) rather than
// to a memory. What a tenant-less memory's policies keep there
// (.memtool-history, .memtool-expiry*) is that memory's: a directory
// holding it has a tenant-less memory and gets no tenants.
func ownName(name string) bool {
	return name == lockName || name == TenantsDir ||
		strings.HasPrefix(name, tempPrefix) || strings.HasPrefix(name, trashPrefix)
}

// checkTenancy fails the tenant-less view of a directory that has tenants.
// Writers call it holding the lock, which a claim (see Tenant) holds too,
// so a write never lands beside tenants. Once seen, tenants are remembered:
// a directory is multi-tenant for good.
func (s *Store) checkTenancy(op, name string) error {
	if s.owner != nil {
		return nil
	}
	if !s.multi.Load() {
		_, err := s.root.Lstat(TenantsDir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return mapErr(op, name, err)
		}
		s.multi.Store(true)
	}
	return &fs.PathError{Op: op, Path: name, Err: memtool.TenancyError(true)}
}

// checkNoMemory fails if the directory holds a tenant-less memory.
func (s *Store) checkNoMemory(op string) error {
	d, err := s.openForListing("")
	if err != nil {
		return mapErr(op, "", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return mapErr(op, "", err)
	}
	for _, n := range names {
		if !ownName(n) {
			return &fs.PathError{Op: op, Path: "", Err: memtool.TenancyError(false)}
		}
	}
	return nil
}

// Tenant returns the store of tenant id, which must pass
// memtool.ValidateTenant: the store in the directory .memtool-tenants/id,
// with this store's options, reached through this store's root (so a
// tenants directory that links out of it is refused). The first call for
// an id opens that store; later calls return the same one while it is
// open. Each call begins a use of it, which its Close ends: the last
// use's Close closes it, so that a server that drops the tenants it no
// longer serves releases their descriptors (two a tenant). This store's
// Close closes every tenant's store, used or not.
//
// The first claim of a directory creates .memtool-tenants holding the
// directory's lock, after checking, under the lock, that the directory
// holds nothing but the store's own files; tenant-less writes check for
// .memtool-tenants under the same lock. So of a tenant-less write and a
// claim, in any processes, exactly one succeeds. A tenant-less read racing
// a claim may still see the (empty) tenant-less memory.
//
// Tenant fails with an error wrapping memtool.ErrTenancy if the directory
// holds a tenant-less memory, and when called on a tenant's store (a
// tenant has no tenants).
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.owner != nil {
		return nil, &fs.PathError{Op: "tenant", Path: id, Err: memtool.TenancyError(false)}
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &fs.PathError{Op: "tenant", Path: id, Err: fs.ErrClosed}
	}
	if t := s.tenants[id]; t != nil {
		t.uses++
		return t, nil
	}
	if err := s.claim(ctx); err != nil {
		return nil, err
	}
	t, err := s.openTenant(id)
	if err != nil {
		return nil, err
	}
	if s.tenants == nil {
		s.tenants = make(map[string]*Store)
	}
	s.tenants[id] = t
	return t, nil
}

// claim makes the directory multi-tenant, or checks that it is.
func (s *Store) claim(ctx context.Context) error {
	if _, err := s.root.Lstat(TenantsDir); err == nil {
		// Claimed before: since then no tenant-less write went in, but a
		// directory where both were made (by hand, or by a version that
		// claimed without the lock) is refused, as before. The claim may
		// be another process's whose fsync is under way, or an earlier
		// one whose fsync failed: this process fsyncs it once itself.
		if err := s.checkNoMemory("tenant"); err != nil || s.claimed {
			return err
		}
		if err := syncDir(s.self, s.hooks); err != nil {
			return mapErr("tenant", "", err)
		}
		s.claimed = true
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return mapErr("tenant", "", err)
	}
	h, err := s.lock(ctx, s.busy)
	if err != nil {
		return err
	}
	defer h.unlock()
	if err := s.checkNoMemory("tenant"); err != nil {
		return err
	}
	// Made now, or by an earlier call whose fsync failed, or meanwhile by a
	// version without the lock: fsynced all the same before it counts.
	if err := s.root.Mkdir(TenantsDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return mapErr("tenant", "", err)
	}
	if err := syncDir(s.self, s.hooks); err != nil {
		return mapErr("tenant", "", err)
	}
	s.claimed = true
	s.multi.Store(true)
	return nil
}

// openTenant opens the store of tenant id, creating its directory.
func (s *Store) openTenant(id string) (*Store, error) {
	name := TenantsDir + "/" + id
	// Made now, or by an earlier open whose fsync failed, or by another
	// process whose fsync may still be under way: this process's first
	// open of the tenant fsyncs it into place before its writes count.
	mkErr := s.root.Mkdir(name, 0o700)
	if mkErr == nil || errors.Is(mkErr, fs.ErrExist) {
		if err := s.syncDir(TenantsDir); err != nil {
			return nil, mapErr("tenant", id, err)
		}
	}
	// A link, even one that stays inside the store (alice -> bob), is not
	// a tenant's directory: following it would give one tenant another's
	// memory.
	for _, n := range []string{TenantsDir, name} {
		if fi, err := s.root.Lstat(n); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, classErr("tenant", id, memtool.ErrEscapes)
		}
	}
	if s.hooks != nil && s.hooks.tenantOpen != nil {
		s.hooks.tenantOpen()
	}
	// Through "/.": the root opens a path's last component without
	// O_DIRECTORY (a FIFO there would be waited on, a device opened), its
	// other components with it.
	root, err := s.root.OpenRoot(name + "/.")
	if err != nil {
		if mkErr != nil && !errors.Is(mkErr, fs.ErrExist) {
			err = mkErr
		}
		return nil, mapErr("tenant", id, err)
	}
	// The look above and the open are two steps: another process may swap
	// the directory for a link between them. What was opened must be the
	// entry id of the real .memtool-tenants, neither reached by a link.
	if err := s.sameTenantDir(root, id); err != nil {
		root.Close()
		return nil, err
	}
	t, err := newStore(filepath.Join(s.dir, TenantsDir, id), root, s.opts)
	if err != nil {
		return nil, err
	}
	t.owner, t.id, t.uses = s, id, 1
	return t, nil
}

// endUse ends one use of the tenant store t (see Tenant), and closes it
// if it was the last. A store this store closed, or one used no more,
// is left as it is.
func (s *Store) endUse(t *Store) error {
	s.mu.Lock()
	if s.tenants[t.id] != t || t.uses == 0 {
		s.mu.Unlock()
		return nil
	}
	if t.uses--; t.uses > 0 {
		s.mu.Unlock()
		return nil
	}
	delete(s.tenants, t.id)
	s.mu.Unlock()
	return t.release()
}

// sameTenantDir checks that root, opened on tenant id's directory, is the
// directory that the entry id of .memtool-tenants names, both found
// without following a link.
func (s *Store) sameTenantDir(root *os.Root, id string) error {
	fi, err := root.Stat(".")
	if err != nil {
		return mapErr("tenant", id, err)
	}
	opened, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return classErr("tenant", id, errors.ErrUnsupported)
	}
	var st unix.Stat_t
	err = withFd(s.self, func(dfd int) error {
		tfd, err := unix.Openat(dfd, TenantsDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(tfd)
		return statAt(tfd, id, &st)
	})
	switch {
	case err == unix.ELOOP || err == unix.ENOTDIR:
		return classErr("tenant", id, memtool.ErrEscapes)
	case err != nil:
		return mapErr("tenant", id, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR || uint64(st.Dev) != uint64(opened.Dev) || st.Ino != opened.Ino:
		return classErr("tenant", id, memtool.ErrEscapes)
	}
	return nil
}

func (s *Store) syncDir(name string) error {
	d, err := s.openForListing(name) // a FIFO there fails the fsync; it is not waited on
	if err != nil {
		return err
	}
	defer d.Close()
	return syncDir(d, s.hooks)
}

// Tenants returns the ids of the directories in .memtool-tenants that are
// valid tenant ids, in byte order; a tenant named but never written may be
// among them. A directory without tenants has none (nil, nil), or fails
// with an error wrapping memtool.ErrTenancy if it holds a tenant-less
// memory; so does a tenant's store.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.owner != nil {
		return nil, &fs.PathError{Op: "tenants", Path: "", Err: memtool.TenancyError(false)}
	}
	d, err := s.openForListing(TenantsDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := s.checkNoMemory("tenants"); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, mapErr("tenants", "", err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, mapErr("tenants", "", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && memtool.ValidateTenant(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	slices.Sort(ids)
	return ids, nil
}
