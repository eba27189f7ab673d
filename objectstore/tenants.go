package objectstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy"
)

// Tenant returns the store of tenant id, which must pass
// memtool.ValidateTenant. The first call marks the bucket (under the
// prefix) multi-tenant for good; on one already used without a tenant it
// fails with memtool.ErrTenancy.
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("objectstore: tenant %q: a tenant's store has no tenants", id)
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, err
	}
	claimed, err := s.bk.claim(ctx, tenancy.Multi)
	if err != nil {
		return nil, err
	}
	return &Store{bk: s.bk, tenant: id, root: s.bk.prefix + tenantsDir + id + "/" + filesDir, gate: tenancy.Claimed(claimed)}, nil
}

// Tenants lists the tenants that hold at least one entry, in key order.
// A store that has never had a tenant has none; a single-tenant one fails
// with memtool.ErrTenancy.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("objectstore: a tenant's store has no tenants")
	}
	if err := s.bk.checkOutside(ctx); err != nil {
		return nil, err
	}
	if ok, err := tenancy.Listed(ctx, record{s.bk}); err != nil || !ok {
		return nil, tenancyErr(err)
	}
	var ids []string
	err := s.bk.b.list(ctx, s.bk.prefix+tenantsDir, true, func(obj listed) bool {
		id := strings.TrimSuffix(strings.TrimPrefix(obj.key, s.bk.prefix+tenantsDir), "/")
		if obj.dir && memtool.ValidateTenant(id) == nil {
			ids = append(ids, id)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// record is the tenancy.Record of a bucket: the object tenancyKey.
type record struct{ bk *bucket }

func (r record) Mode(ctx context.Context) (string, error) {
	data, err := r.bk.b.read(ctx, r.bk.prefix+tenancyKey, 1<<16)
	if notFound(err) {
		return "", nil
	}
	return string(data), err
}

// Create writes the mode with a create-only write, so that of two
// processes claiming at once one wins.
func (r record) Create(ctx context.Context, mode string) error {
	err := r.bk.b.write(ctx, r.bk.prefix+tenancyKey, []byte(mode), true)
	if errors.Is(err, errExists) {
		return nil
	}
	return err
}

// readyToRead checks ctx, and that the bucket's recorded mode is the
// store's, before a read, without recording one: reading an unused store
// decides nothing (tenancy.Peek).
func (s *Store) readyToRead(ctx context.Context) error {
	return s.gate.Pass(ctx, func(ctx context.Context) (bool, error) {
		return s.bk.check(ctx, tenancy.Peek, s.mode())
	})
}

// claim records the tenancy mode on first use and checks it after.
func (bk *bucket) claim(ctx context.Context, mode string) (bool, error) {
	return bk.check(ctx, tenancy.Claim, mode)
}

// check runs check (tenancy.Claim or Peek) on the bucket's record of its
// mode, once checkOutside has passed.
func (bk *bucket) check(ctx context.Context, check func(context.Context, tenancy.Record, string) (bool, error), mode string) (bool, error) {
	if err := bk.checkOutside(ctx); err != nil {
		return false, err
	}
	claimed, err := check(ctx, record{bk}, mode)
	return claimed, tenancyErr(err)
}

// checkOutside refuses a store whose prefix lies in the memories of
// another store in the bucket: under OUTER/f/ or OUTER/tenants/, where
// OUTER/.memtool-tenancy says a store is. Its keys would be that store's
// entries (the store at p/tenants/t is tenant t of the store at p, and
// the files of the one at p/f/x are the directory x of the memory at p),
// so the two would read and change each other's files. It looks once per
// bucket that passes, with one request per "f" or "tenants" in the
// prefix (none for most prefixes).
func (bk *bucket) checkOutside(ctx context.Context) error {
	bk.outsideMu.Lock()
	defer bk.outsideMu.Unlock()
	if bk.outside {
		return nil
	}
	segs := strings.Split(strings.TrimSuffix(bk.prefix, "/"), "/")
	for i, seg := range segs {
		if seg+"/" != filesDir && seg+"/" != tenantsDir {
			continue
		}
		outer := strings.Join(segs[:i], "/")
		if outer != "" {
			outer += "/"
		}
		ok, err := exists(ctx, bk.b, outer+tenancyKey)
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("objectstore: the prefix %q is inside the store at the prefix %q of the same bucket (its memories are under %sf/ and %stenants/), so each would read and change the other's files; choose a prefix beside it", strings.TrimSuffix(bk.prefix, "/"), strings.TrimSuffix(outer, "/"), outer, outer)
		}
	}
	bk.outside = true
	return nil
}

// tenancyErr names the store in a tenancy mismatch; the bucket's own
// errors pass as they are.
func tenancyErr(err error) error {
	if errors.Is(err, memtool.ErrTenancy) {
		return fmt.Errorf("objectstore: %w", err)
	}
	return err
}

// ready checks ctx and makes sure the store has claimed the bucket's mode
// before its first change.
func (s *Store) ready(ctx context.Context) error {
	return s.gate.Pass(ctx, func(ctx context.Context) (bool, error) {
		return s.bk.claim(ctx, s.mode())
	})
}

// mode is the tenancy mode the store's bucket must have: multi for a
// tenant's store (whose Tenant call could not record it on a read-only
// bucket), single for the tenant-less one.
func (s *Store) mode() string {
	if s.tenant != "" {
		return tenancy.Multi
	}
	return tenancy.Single
}
