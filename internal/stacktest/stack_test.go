package stacktest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/sqlitestore"
)

// A stack is the policy stack in the order of cmd/memtool's applyPolicy:
// audit, secrets, limits, history, expiry, encrypt, the base store.
type stack struct {
	base         memtool.Store
	belowExpiry  memtool.Store // encrypt over base: where gc and restore work
	belowHistory memtool.Store // expiry over that: where versions are read
	hist         memtool.Store // the history layer
	top          memtool.Store
	mem          *memtool.Memory
	log          *syncbuf.Buffer
	key          encrypt.Key
}

type stackOptions struct {
	limits  *limits.Options
	redact  bool
	history *history.Options
	expiry  *expiry.Options
	keys    []encrypt.Key
}

func newStack(t *testing.T, base memtool.Store, o stackOptions) *stack {
	t.Helper()
	st := &stack{base: base, log: &syncbuf.Buffer{}}
	keys := o.keys
	if keys == nil {
		k, err := encrypt.NewKey("k1")
		if err != nil {
			t.Fatal(err)
		}
		keys = []encrypt.Key{k}
	}
	st.key = keys[0]
	s, err := encrypt.New(base, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.belowExpiry = s
	s = expiry.New(s, o.expiry)
	st.belowHistory = s
	s = history.New(s, o.history)
	st.hist = s
	if o.limits != nil {
		s = limits.New(s, o.limits)
	}
	if o.redact {
		s = secrets.New(s, &secrets.Options{Policy: secrets.Redact})
	} else {
		s = secrets.New(s, nil)
	}
	s = audit.New(s, st.log, nil)
	st.top = s
	st.mem = memtool.New(s, nil)
	return st
}

// bases returns the real stores the tests run over: PostgreSQL too when
// $MEMTOOL_TEST_POSTGRES names a server (.ci/postgres.sh), and always under CI.
func bases(t *testing.T) map[string]func() memtool.Store {
	m := map[string]func() memtool.Store{
		"memstore": func() memtool.Store { return memstore.New() },
		"filestore": func() memtool.Store {
			s, err := filestore.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"sqlitestore": func() memtool.Store {
			s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "m.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	if os.Getenv(pgtest.EnvVar) != "" || os.Getenv("CI") != "" { // under CI, a missing server fails
		m["pgstore"] = func() memtool.Store {
			s, err := pgstore.Open(context.Background(), pgtest.URL(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	return m
}

// run runs one command of the memory tool, given as JSON fields.
func (st *stack) run(t *testing.T, fields map[string]any) memtool.Result {
	t.Helper()
	in, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return st.mem.Run(context.Background(), in)
}

func (st *stack) mustRun(t *testing.T, fields map[string]any) memtool.Result {
	t.Helper()
	res := st.run(t, fields)
	if res.IsError {
		t.Fatalf("%v: %s", fields, res.Text)
	}
	return res
}

func create(p, text string) map[string]any {
	return map[string]any{"command": "create", "path": p, "file_text": text}
}

// A hook is a store that runs a function before some calls reach the
// store it wraps. The stores of its tenants (over a tenanted store) run
// the same function.
type hook struct {
	memtool.Forwarder
	inner  memtool.Store
	up     *hook // the hook whose function a tenant's runs
	mu     sync.Mutex
	before func(op, name string)
}

func newHook(inner memtool.Store) *hook {
	h := &hook{inner: inner}
	h.Forwarder = memtool.Forward(inner, func(t memtool.Store, _ string) memtool.Store {
		th := newHook(t)
		th.up = h
		return th
	})
	return h
}

func (h *hook) set(fn func(op, name string)) {
	h.mu.Lock()
	h.before = fn
	h.mu.Unlock()
}

func (h *hook) call(op, name string) {
	if h.up != nil {
		h.up.call(op, name)
		return
	}
	h.mu.Lock()
	fn := h.before
	h.mu.Unlock()
	if fn != nil {
		fn(op, name)
	}
}

// once returns a hook function that runs fn the first time op reaches
// name, and never again (also not from inside fn).
func once(op, name string, fn func()) func(string, string) {
	var done bool
	var mu sync.Mutex
	return func(o, n string) {
		if o != op || n != name {
			return
		}
		mu.Lock()
		first := !done
		done = true
		mu.Unlock()
		if first {
			fn()
		}
	}
}

// renameRacing renames oldname to newname through s, running change
// (another caller's) from the moment the rename reaches the store under
// h, and giving it a while to land before the rename goes on; it returns
// the rename's error and the change's.
func renameRacing(ctx context.Context, h *hook, s memtool.Store, oldname, newname string, change func() error) (rerr, cerr error) {
	done := make(chan error, 1)
	h.set(once("rename", oldname, func() {
		go func() { done <- change() }()
		select {
		case err := <-done:
			done <- err
		case <-time.After(300 * time.Millisecond):
		}
	}))
	rerr = s.(memtool.Renamer).Rename(ctx, oldname, newname)
	h.set(nil)
	return rerr, <-done
}

func (h *hook) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	fi, err := h.inner.Stat(ctx, name)
	h.call("stat-after", name)
	return fi, err
}

func (h *hook) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	h.call("read", name)
	return h.inner.ReadFile(ctx, name, limit)
}

func (h *hook) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	h.call("readdir", name)
	return h.inner.ReadDir(ctx, name)
}

func (h *hook) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	h.call("write", name)
	return h.inner.WriteFile(ctx, name, data, mode)
}

func (h *hook) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	h.call("update", name)
	return h.inner.Update(ctx, name, limit, fn)
}

func (h *hook) Mkdir(ctx context.Context, name string) error {
	h.call("mkdir", name)
	return h.inner.Mkdir(ctx, name)
}

func (h *hook) Remove(ctx context.Context, name string) error {
	h.call("remove", name)
	return h.inner.Remove(ctx, name)
}

func (h *hook) Rename(ctx context.Context, oldname, newname string) error {
	h.call("rename", oldname)
	return memtool.ForwardRename(ctx, h.inner, oldname, newname)
}
