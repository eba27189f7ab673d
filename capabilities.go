package memtool

import (
	"context"
	"errors"
	"io"
	"io/fs"
)

// A store's optional capabilities are Renamer, RemoveAller, Tenanted and
// TenantLister. A policy that wraps a store cannot know, when it is
// written, which of them the store it wraps will have, so it implements
// all of them and answers an error wrapping errors.ErrUnsupported where
// that store lacks one; callers then behave as if the capability were
// absent (Move and RemoveAll fall back, Memory with them). Adding a
// capability adds one method to every wrapper, never a new combination.
// DirLister, NameLister and FileOpener are the exceptions: a wrapper has
// one only if it opts in (see each; ReadThrough opts in to all three),
// since listing by names bypasses the wrapper's ReadDir, and reading a
// stream its ReadFile. Resolver is asked of the store under the wrappers
// (see ResolveName): no policy changes a name.

// A Wrapper is a Store that wraps another: a policy such as encryption or
// quotas. It implements every optional capability, forwarding each to the
// store it wraps (through its own policy) or answering ErrUnsupported when
// that store lacks it. Unwrap returns the wrapped store, so that Has can
// tell in advance what the wrapper will answer.
type Wrapper interface {
	Store
	Unwrap() Store
}

// Has reports whether s really has the optional capability C (Renamer,
// RemoveAller, Tenanted or TenantLister): s implements C and, if s is a
// Wrapper, the store it wraps has C too, down the chain. A caller that
// must choose before it calls (Memory chooses its locking; history its
// way of deleting) asks Has; one that can just call treats an
// ErrUnsupported answer as absence.
func Has[C any](s Store) bool {
	for {
		if _, ok := s.(C); !ok {
			return false
		}
		w, ok := s.(Wrapper)
		if !ok {
			return true
		}
		s = w.Unwrap()
	}
}

// A Forwarder implements a Wrapper's optional capabilities by forwarding
// them to the wrapped store: a wrapper embeds one, made by Forward, and
// defines its own method where its policy has a say (a Rename that checks
// the new name calls the Forwarder's Rename when the name passes).
type Forwarder struct {
	inner Store
	wrap  func(tenant Store, id string) Store
}

// Forward returns the Forwarder of a wrapper over inner. wrap wraps the
// store of tenant id of inner in the wrapper's policy, bound to that
// tenant where the policy is per tenant; nil means the wrapper offers no
// tenants (Tenant answers ErrUnsupported).
func Forward(inner Store, wrap func(tenant Store, id string) Store) Forwarder {
	return Forwarder{inner, wrap}
}

// Unwrap returns the wrapped store.
func (f Forwarder) Unwrap() Store { return f.inner }

// Rename forwards to the wrapped store's Renamer (ForwardRename).
func (f Forwarder) Rename(ctx context.Context, oldname, newname string) error {
	return ForwardRename(ctx, f.inner, oldname, newname)
}

// RemoveAll forwards to the wrapped store's RemoveAller (ForwardRemoveAll).
func (f Forwarder) RemoveAll(ctx context.Context, name string) error {
	return ForwardRemoveAll(ctx, f.inner, name)
}

// Tenant returns the store of tenant id of the wrapped store, wrapped in
// the same policy.
func (f Forwarder) Tenant(ctx context.Context, id string) (Store, error) {
	if f.wrap == nil {
		return nil, Unsupported("tenant", id)
	}
	t, err := ForwardTenant(ctx, f.inner, id)
	if err != nil {
		return nil, err
	}
	return f.wrap(t, id), nil
}

// Tenants forwards to the wrapped store's TenantLister (ForwardTenants).
func (f Forwarder) Tenants(ctx context.Context) ([]string, error) {
	return ForwardTenants(ctx, f.inner)
}

// Unsupported returns the error of a wrapper asked for a capability that
// the store it wraps lacks: op name: errors.ErrUnsupported.
func Unsupported(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: errors.ErrUnsupported}
}

// ForwardRename calls s's Rename, or returns Unsupported if s has no
// Renamer. A wrapper's Rename calls it on the store it wraps.
func ForwardRename(ctx context.Context, s Store, oldname, newname string) error {
	if r, ok := s.(Renamer); ok {
		return r.Rename(ctx, oldname, newname)
	}
	return Unsupported("rename", oldname)
}

// ForwardRemoveAll calls s's RemoveAll, or returns Unsupported if s has no
// RemoveAller.
func ForwardRemoveAll(ctx context.Context, s Store, name string) error {
	if ra, ok := s.(RemoveAller); ok {
		return ra.RemoveAll(ctx, name)
	}
	return Unsupported("removeall", name)
}

// ForwardTenant returns the store of tenant id of s, or Unsupported if s
// is not Tenanted. A wrapper's Tenant wraps what it returns in the same
// policy, bound to that tenant where the policy is per tenant.
func ForwardTenant(ctx context.Context, s Store, id string) (Store, error) {
	if ts, ok := s.(Tenanted); ok {
		return ts.Tenant(ctx, id)
	}
	return nil, Unsupported("tenant", id)
}

// ForwardTenants returns the tenants of s, or Unsupported if s is not a
// TenantLister.
func ForwardTenants(ctx context.Context, s Store) ([]string, error) {
	if tl, ok := s.(TenantLister); ok {
		return tl.Tenants(ctx)
	}
	return nil, Unsupported("tenants", "")
}

// unsupported reports whether err says that a capability is missing.
func unsupported(err error) bool { return errors.Is(err, errors.ErrUnsupported) }

// A ReadThrough reads through to the store it was made over: Stat,
// ReadFile and ReadDir, and the reading capabilities DirLister, NameLister
// and FileOpener. A wrapper whose policy has no say in what is read (it
// checks or changes writes alone) embeds one (PassReads) instead of
// writing its reads out, and so keeps the cheap reads of the store below
// it: listing a large directory by names, reading each small one once,
// streaming a large file. A wrapper that changes, hides or records what
// is read must not. storetest.RunReadForwarding checks a wrapper that
// does.
type ReadThrough struct{ inner Store }

// PassReads returns the ReadThrough of a wrapper over inner.
func PassReads(inner Store) ReadThrough { return ReadThrough{inner} }

var (
	_ DirLister  = ReadThrough{}
	_ NameLister = ReadThrough{}
	_ FileOpener = ReadThrough{}
)

func (r ReadThrough) Stat(ctx context.Context, name string) (FileInfo, error) {
	return r.inner.Stat(ctx, name)
}

func (r ReadThrough) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return r.inner.ReadFile(ctx, name, limit)
}

func (r ReadThrough) ReadDir(ctx context.Context, name string) ([]FileInfo, error) {
	return r.inner.ReadDir(ctx, name)
}

func (r ReadThrough) ListDir(ctx context.Context, name string, max int, fn func(string) bool) ([]FileInfo, bool, error) {
	return ForwardListDir(ctx, r.inner, name, max, fn)
}

func (r ReadThrough) ListNames(ctx context.Context, name string, fn func(string) bool) error {
	return ForwardListNames(ctx, r.inner, name, fn)
}

func (r ReadThrough) OpenFile(ctx context.Context, name string, limit int64) (io.ReadCloser, int64, error) {
	return ForwardOpenFile(ctx, r.inner, name, limit)
}
