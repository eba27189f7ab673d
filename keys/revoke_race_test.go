package keys

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// slowGet is a backend whose get reads the record at once and returns it
// only when told: a Verify whose read was answered just before a Revoke
// and returns just after it.
type slowGet struct {
	backend
	read    chan struct{} // closed once get has read
	release chan struct{} // get returns once this is closed
}

func (s *slowGet) get(ctx context.Context, id string) (record, error) {
	r, err := s.backend.get(ctx, id)
	close(s.read)
	<-s.release
	return r, err
}

// TestRevokeRacingVerify: a Verify that read a key before a Revoke and
// returns after it must not leave the key cached as usable. Once Revoke
// has returned, the revoking keyring refuses the key at once.
func TestRevokeRacingVerify(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now } // the clock does not move: the cache is fresh
	fk := newFileKeys(filepath.Join(t.TempDir(), "memories"))
	k := newKeyring(fk, &Options{Now: clock})
	key, token, err := k.Add(ctx, NewKey{Tenant: "alice", Scope: Write})
	if err != nil {
		t.Fatal(err)
	}

	slow := &slowGet{backend: fk, read: make(chan struct{}), release: make(chan struct{})}
	k.b = slow
	done := make(chan error)
	go func() {
		_, err := k.Verify(ctx, token)
		done <- err
	}()
	<-slow.read
	if err := k.Revoke(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	close(slow.release)
	<-done // it began before the revocation: either answer is right
	k.b = fk

	if _, err := k.Verify(ctx, token); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("after Revoke returned, Verify in the revoking keyring: %v, want ErrInvalidToken", err)
	}
}
