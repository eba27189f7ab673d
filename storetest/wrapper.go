package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memtool/memtool"
)

// A Refusal is one operation that a wrapper refuses by its own policy (a
// limit crossed, a secret written): RunWrapper checks that it fails and
// changes nothing, on the wrapper and on a tenant of it.
type Refusal struct {
	Name string
	// Setup, if not nil, prepares the wrapped store, through the wrapper.
	Setup func(ctx context.Context, s memtool.Store) error
	// Do runs the operation on the wrapped store.
	Do func(ctx context.Context, s memtool.Store) error
}

// RunWrapper checks a policy wrapper, whatever its policy: wrap returns the
// wrapper around inner (stacked policies are one wrapper here), and
// newInner returns a new, unused store with every optional capability
// (memtool.Renamer, RemoveAller, Tenanted and TenantLister). It runs the
// conformance suite over inner and over inner with its capabilities
// hidden (Bare); checks that the wrapper is a memtool.Wrapper that has
// exactly the capabilities its store has, answers ErrUnsupported for the
// others, changing nothing, and that Move and RemoveAll then fall back;
// runs the tenant suite (RunTenants) through the wrapper, whose tenants
// are wrapped in the same policy; and runs each refusal on the wrapper and
// on a tenant of it.
func RunWrapper(t *testing.T, newInner func(t *testing.T) memtool.Store, wrap func(t *testing.T, inner memtool.Store) memtool.Store, refusals []Refusal) {
	t.Helper()
	full := func(t *testing.T) memtool.Store {
		inner := newInner(t)
		if !memtool.Has[memtool.Renamer](inner) || !memtool.Has[memtool.RemoveAller](inner) ||
			!memtool.Has[memtool.Tenanted](inner) || !memtool.Has[memtool.TenantLister](inner) {
			t.Fatalf("newInner: %T lacks an optional capability", inner)
		}
		return wrap(t, inner)
	}
	t.Run("Conformance", func(t *testing.T) { Run(t, full) })
	t.Run("ConformanceBare", func(t *testing.T) {
		Run(t, func(t *testing.T) memtool.Store { return wrap(t, Bare(newInner(t))) })
	})
	t.Run("Forwarded", func(t *testing.T) { testForwarded(t, full(t)) })
	t.Run("Unsupported", func(t *testing.T) { testUnsupported(t, wrap(t, Bare(newInner(t)))) })
	t.Run("Tenants", func(t *testing.T) { RunTenants(t, full) })
	t.Run("TenantWrapped", func(t *testing.T) { testTenantWrapped(t, full(t)) })
	for _, r := range refusals {
		t.Run("Refusal/"+r.Name, func(t *testing.T) {
			testRefusal(t, full(t), r)
			w := full(t)
			testRefusal(t, tenant(t, w.(memtool.Tenanted), "t1"), r)
		})
	}
}

// testForwarded: over a store with every capability, the wrapper is a
// memtool.Wrapper with all of them (Run checks Rename and RemoveAll).
func testForwarded(t *testing.T, w memtool.Store) {
	if _, ok := w.(memtool.Wrapper); !ok {
		t.Errorf("%T is not a memtool.Wrapper", w)
	}
	for name, has := range map[string]bool{
		"Renamer":      memtool.Has[memtool.Renamer](w),
		"RemoveAller":  memtool.Has[memtool.RemoveAller](w),
		"Tenanted":     memtool.Has[memtool.Tenanted](w),
		"TenantLister": memtool.Has[memtool.TenantLister](w),
	} {
		if !has {
			t.Errorf("%T over a store with every capability: not a %s", w, name)
		}
	}
}

// testUnsupported: over a store without capabilities, the wrapper still
// implements them all, Has says it lacks them, each answers
// ErrUnsupported and changes nothing, and Move and RemoveAll fall back.
func testUnsupported(t *testing.T, w memtool.Store) {
	ctx := t.Context()
	mustMkdir(t, w, "d")
	mustWrite(t, w, "d/x", "x")
	before := snapshot(t, w)
	check := func(name string, has bool, err error) {
		t.Helper()
		if has {
			t.Errorf("Has[%s] over a store without it", name)
		}
		WantErr(t, name, err, errors.ErrUnsupported)
	}
	r, ok := w.(memtool.Renamer)
	if !ok {
		t.Fatalf("%T does not implement memtool.Renamer", w)
	}
	check("Renamer", memtool.Has[memtool.Renamer](w), r.Rename(ctx, "d", "e"))
	ra, ok := w.(memtool.RemoveAller)
	if !ok {
		t.Fatalf("%T does not implement memtool.RemoveAller", w)
	}
	check("RemoveAller", memtool.Has[memtool.RemoveAller](w), ra.RemoveAll(ctx, "d"))
	ts, ok := w.(memtool.Tenanted)
	if !ok {
		t.Fatalf("%T does not implement memtool.Tenanted", w)
	}
	_, err := ts.Tenant(ctx, "t1")
	check("Tenanted", memtool.Has[memtool.Tenanted](w), err)
	tl, ok := w.(memtool.TenantLister)
	if !ok {
		t.Fatalf("%T does not implement memtool.TenantLister", w)
	}
	_, err = tl.Tenants(ctx)
	check("TenantLister", memtool.Has[memtool.TenantLister](w), err)
	unchanged(t, w, before, "the unsupported calls")

	wantNoErr(t, "Move(d, e)", memtool.Move(ctx, w, "d", "e", noLimit))
	checkMissing(t, w, "d")
	checkFile(t, w, "e/x", "x")
	wantNoErr(t, "RemoveAll(e)", memtool.RemoveAll(ctx, w, "e"))
	checkEntries(t, w, "", nil)
}

// testTenantWrapped: a tenant of the wrapper is wrapped in the same policy
// (the same type, itself a memtool.Wrapper) over the inner store's tenant.
func testTenantWrapped(t *testing.T, w memtool.Store) {
	ts := tenant(t, w.(memtool.Tenanted), "t1")
	if got, want := fmt.Sprintf("%T", ts), fmt.Sprintf("%T", w); got != want {
		t.Errorf("Tenant returned a %s, want a %s", got, want)
	}
	if _, ok := ts.(memtool.Wrapper); !ok {
		t.Errorf("the tenant's store %T is not a memtool.Wrapper", ts)
	}
	mustWrite(t, ts, "a.txt", "t1's")
	checkFile(t, tenant(t, w.(memtool.Tenanted), "t1"), "a.txt", "t1's")
}

// testRefusal runs r on s: it fails, and neither s nor the store it wraps
// changes.
func testRefusal(t *testing.T, s memtool.Store, r Refusal) {
	ctx := t.Context()
	if r.Setup != nil {
		if err := r.Setup(ctx, s); err != nil {
			t.Fatalf("Setup: %v", err)
		}
	}
	before := snapshot(t, s)
	var inner memtool.Store
	var innerBefore tree
	if w, ok := s.(memtool.Wrapper); ok {
		inner = w.Unwrap()
		innerBefore = snapshot(t, inner)
	}
	if err := r.Do(ctx, s); err == nil {
		t.Errorf("%s: no error, want a refusal", r.Name)
	}
	unchanged(t, s, before, r.Name)
	if inner != nil {
		unchanged(t, inner, innerBefore, r.Name+" (the wrapped store)")
	}
}

// Bare returns s with its optional capabilities hidden: a memtool.Store
// and nothing more, as the simplest backends are.
func Bare(s memtool.Store) memtool.Store { return bare{s} }

type bare struct{ s memtool.Store }

func (b bare) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return b.s.Stat(ctx, name)
}

func (b bare) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return b.s.ReadFile(ctx, name, limit)
}

func (b bare) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	return b.s.ReadDir(ctx, name)
}

func (b bare) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return b.s.WriteFile(ctx, name, data, mode)
}

func (b bare) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	return b.s.Update(ctx, name, limit, fn)
}

func (b bare) Mkdir(ctx context.Context, name string) error { return b.s.Mkdir(ctx, name) }

func (b bare) Remove(ctx context.Context, name string) error { return b.s.Remove(ctx, name) }
