package memtool_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/storetest"
)

// forwarder is the smallest memtool.Wrapper: it forwards everything to s,
// answering ErrUnsupported for what s lacks.
type forwarder struct{ memtool.Store }

func (f forwarder) Unwrap() memtool.Store { return f.Store }

func (f forwarder) Rename(ctx context.Context, oldname, newname string) error {
	return memtool.ForwardRename(ctx, f.Store, oldname, newname)
}

func (f forwarder) RemoveAll(ctx context.Context, name string) error {
	return memtool.ForwardRemoveAll(ctx, f.Store, name)
}

func (f forwarder) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	t, err := memtool.ForwardTenant(ctx, f.Store, id)
	if err != nil {
		return nil, err
	}
	return forwarder{t}, nil
}

func (f forwarder) Tenants(ctx context.Context) ([]string, error) {
	return memtool.ForwardTenants(ctx, f.Store)
}

// unwrapless forwards like forwarder but cannot be unwrapped, so Has takes
// its word for every capability and only its answers tell.
type unwrapless struct{ memtool.Store }

func (u unwrapless) Rename(ctx context.Context, oldname, newname string) error {
	return memtool.ForwardRename(ctx, u.Store, oldname, newname)
}

func (u unwrapless) RemoveAll(ctx context.Context, name string) error {
	return memtool.ForwardRemoveAll(ctx, u.Store, name)
}

func TestHas(t *testing.T) {
	full := memstore.New()
	for _, tc := range []struct {
		name   string
		s      memtool.Store
		rn, ra bool
	}{
		{"memstore", full, true, true},
		{"basic", storetest.Bare(full), false, false},
		{"wrapper over memstore", forwarder{forwarder{full}}, true, true},
		{"wrapper over basic", forwarder{forwarder{storetest.Bare(full)}}, false, false},
		{"unwrapless over basic", unwrapless{storetest.Bare(full)}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rn, ra := memtool.Has[memtool.Renamer](tc.s), memtool.Has[memtool.RemoveAller](tc.s); rn != tc.rn || ra != tc.ra {
				t.Errorf("Has Renamer %v, RemoveAller %v; want %v, %v", rn, ra, tc.rn, tc.ra)
			}
		})
	}
}

// TestForwardUnsupported: the Forward helpers answer ErrUnsupported for a
// store without the capability, and change nothing.
func TestForwardUnsupported(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	if err := inner.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	s := storetest.Bare(inner)
	_, terr := memtool.ForwardTenant(ctx, s, "t1")
	_, lerr := memtool.ForwardTenants(ctx, s)
	for what, err := range map[string]error{
		"ForwardRename":    memtool.ForwardRename(ctx, s, "d", "e"),
		"ForwardRemoveAll": memtool.ForwardRemoveAll(ctx, s, "d"),
		"ForwardTenant":    terr,
		"ForwardTenants":   lerr,
	} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", what, err)
		}
	}
	if fi, err := inner.Stat(ctx, "d"); err != nil || !fi.IsDir() {
		t.Errorf("d after the refused calls: %+v, %v", fi, err)
	}
	if _, err := inner.Stat(ctx, "e"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("e after a refused rename: %v", err)
	}
}

// TestFallbackThroughWrapper: Move, RemoveAll and Memory's rename and
// delete fall back over a wrapper whose store has neither capability,
// whether the wrapper says so in advance or only by its answers.
func TestFallbackThroughWrapper(t *testing.T) {
	ctx := context.Background()
	for name, wrap := range map[string]func(memtool.Store) memtool.Store{
		"wrapper":    func(s memtool.Store) memtool.Store { return forwarder{s} },
		"unwrapless": func(s memtool.Store) memtool.Store { return unwrapless{s} },
	} {
		t.Run(name, func(t *testing.T) {
			inner := memstore.New()
			s := wrap(storetest.Bare(inner))
			mem := memtool.New(s, nil)
			for _, in := range [][]string{
				{"command", "create", "path", "/memories/a/x.md", "file_text", "x"},
				{"command", "create", "path", "/memories/a/b/y.md", "file_text", "y"},
				{"command", "rename", "old_path", "/memories/a", "new_path", "/memories/c"},
			} {
				if r := do(mem, in...); r.IsError {
					t.Fatalf("%v: %s", in, r.Text)
				}
			}
			if got, err := readText(inner, "c/b/y.md"); got != "y" {
				t.Errorf("c/b/y.md after the rename: %q, %v", got, err)
			}
			if _, err := inner.Stat(ctx, "a"); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("a after the rename: %v", err)
			}
			if r := do(mem, "command", "delete", "path", "/memories/c"); r.IsError {
				t.Fatal(r.Text)
			}
			if _, err := inner.Stat(ctx, "c"); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("c after the delete: %v", err)
			}

			if err := s.Mkdir(ctx, "m"); err != nil {
				t.Fatal(err)
			}
			if err := s.WriteFile(ctx, "m/n.md", []byte("n"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			if err := memtool.Move(ctx, s, "m", "o", 1<<20); err != nil {
				t.Fatal("Move:", err)
			}
			if got, err := readText(inner, "o/n.md"); got != "n" {
				t.Errorf("o/n.md after Move: %q, %v", got, err)
			}
			if err := memtool.RemoveAll(ctx, s, "o"); err != nil {
				t.Fatal("RemoveAll:", err)
			}
			if entries, err := inner.ReadDir(ctx, ""); err != nil || len(entries) != 0 {
				t.Errorf("the root after RemoveAll: %+v, %v", entries, err)
			}
		})
	}
}

// TestWrappedStack: the whole policy stack, as memtool's CLI builds it
// (encrypt, expiry, history, limits, secrets, audit, from the inside out),
// over a tenanted store is still one: every capability is forwarded
// through six wrappers, and a tenant's store has every policy, its
// refusals included.
func TestWrappedStack(t *testing.T) {
	key, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunWrapper(t, func(t *testing.T) memtool.Store {
		fs, err := filestore.Open(t.TempDir(), nil)
		return storetest.Opened(t, fs, err)
	}, func(t *testing.T, inner memtool.Store) memtool.Store {
		s, err := encrypt.New(inner, []encrypt.Key{key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s = history.New(expiry.New(s, nil), nil)
		s = secrets.New(limits.New(s, &limits.Options{MaxFileSize: 1 << 20}), nil)
		return audit.New(s, io.Discard, nil)
	}, []storetest.Refusal{
		{Name: "FileSize", Do: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "big", make([]byte, 1<<20+1), memtool.CreateOnly)
		}},
		{Name: "Secret", Do: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "notes.md", []byte("key AKIA"+"IOSFODNN7EXAMPLE\n"), memtool.CreateOnly)
		}},
	})
}
