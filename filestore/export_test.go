package filestore

import "context"

// ListNamesPortable is ListNames with the reader of systems other than
// Linux (os.File.ReadDir), so that it is tested here too.
func ListNamesPortable(ctx context.Context, s *Store, name string, fn func(string) bool) error {
	d, err := s.openDir(ctx, name)
	if err != nil {
		return err
	}
	defer d.Close()
	return readNamesPortable(ctx, d, fn)
}

// Hooks stop a Store's writes where other writers may come in (see
// testHooks); nil fields are not called.
type Hooks struct {
	Staged, Relock, DirSync, Waiting func()
	DirSyncErr                       func() error // a directory fsync's failure, if not nil
	TenantOpen                       func()       // Tenant has checked a tenant's directory and opens it
}

// SetHooks sets s's hooks; call it before s is used.
func SetHooks(s *Store, h Hooks) {
	s.hooks = &testHooks{staged: h.Staged, relock: h.Relock, dirSync: h.DirSync, waiting: h.Waiting, dirSyncErr: h.DirSyncErr, tenantOpen: h.TenantOpen}
}

// NoStage makes s write as where O_TMPFILE is missing: every temp file
// under the lock.
func NoStage(s *Store) { s.noStage.Store(true) }

// NoPin makes s's replaces free the old file's blocks inside the rename,
// under the write lock, as before pinAt; call it before s is used.
func NoPin(s *Store) { s.noPin = true }

// Stable runs try as a listing does (see stable): until it reports a read
// of one moment, at last holding the write lock.
func Stable(ctx context.Context, s *Store, try func() (bool, error)) error {
	return s.stable(ctx, try)
}
