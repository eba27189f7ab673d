package keys

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Copy adds to dst every key of src that keep accepts (nil: every key)
// and dst does not hold, with the hash of its secret, so that its token
// opens dst as it opens src (memtool migrate copies a served store's keys
// so). A key dst holds already (from an earlier copy) is left as it is,
// but revoked in dst too if src has revoked it since. A key id that both
// hold with different secrets is an error, and never overwritten.
//
// It returns the keys it added and those it revoked. A stored record of
// src that is no valid key is not copied: Copy goes on with the others
// and then returns an error wrapping ErrMalformed that names it.
func Copy(ctx context.Context, dst, src *Keyring, keep func(Key) bool) (added, revoked []Key, err error) {
	recs, listErr := src.b.list(ctx)
	if listErr != nil && !errors.Is(listErr, ErrMalformed) {
		return nil, nil, fmt.Errorf("keys: copy: %w", listErr)
	}
	for _, r := range recs {
		if keep != nil && !keep(r.Key) {
			continue
		}
		err := dst.b.insert(ctx, r)
		if err == nil {
			added = append(added, r.Key)
			continue
		}
		if !errors.Is(err, errIDTaken) {
			return added, revoked, fmt.Errorf("keys: copy %s: %w", r.ID, err)
		}
		have, err := dst.b.get(ctx, r.ID)
		if err != nil {
			return added, revoked, fmt.Errorf("keys: copy %s: %w", r.ID, err)
		}
		if !bytes.Equal(have.hash, r.hash) {
			return added, revoked, fmt.Errorf("keys: copy %s: the target holds another key with this id; neither was changed", r.ID)
		}
		if !r.Revoked.IsZero() && have.Revoked.IsZero() {
			if err := dst.b.revoke(ctx, r.ID, r.Revoked); err != nil {
				return added, revoked, fmt.Errorf("keys: copy %s: revoke: %w", r.ID, err)
			}
			dst.forget(r.ID)
			revoked = append(revoked, r.Key)
		}
	}
	if listErr != nil {
		return added, revoked, fmt.Errorf("keys: copy: %w", listErr)
	}
	return added, revoked, nil
}
