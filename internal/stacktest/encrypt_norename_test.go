package stacktest

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/memstore"
)

// withoutRenamer is a real store with none of its optional capabilities:
// the model's renames, the trash and the history fall back to copying
// through the encryption.
type withoutRenamer struct{ memtool.Store }

// TestRekeyWithoutRenamer: over a store without Renamer, what the
// fallbacks copied (a renamed directory, the trash, versions) is sealed
// by the wrapper, bound to the tenant, and Rekey moves all of it to the
// new key; the memory, its versions and its trash then open with the new
// key alone.
func TestRekeyWithoutRenamer(t *testing.T) {
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	raw := withoutRenamer{memstore.New()}
	k1, _ := encrypt.NewKey("k1")
	k2, _ := encrypt.NewKey("k2")
	opts := func(keys ...encrypt.Key) stackOptions {
		return stackOptions{keys: keys, expiry: &expiry.Options{Now: clock.Now}, history: &history.Options{Now: clock.Now, MaxAge: -1}}
	}
	st := newStack(t, raw, opts(k1))
	st.mustRun(t, create("/memories/a/old.md", "old text"))
	st.mustRun(t, create("/memories/a/keep.md", "keep"))
	st.mustRun(t, create("/memories/b/del.md", "to delete"))
	st.mustRun(t, map[string]any{"command": "str_replace", "path": "/memories/a/keep.md", "old_str": "keep", "new_str": "kept"})
	st.mustRun(t, map[string]any{"command": "rename", "old_path": "/memories/a", "new_path": "/memories/c/a"})
	st.mustRun(t, map[string]any{"command": "delete", "path": "/memories/b"})
	clock.Add(40 * 24 * time.Hour)
	st.mustRun(t, map[string]any{"command": "view", "path": "/memories/c/a/keep.md"})
	if rep, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clock.Now}); err != nil || len(rep.Expired) != 1 {
		t.Fatalf("collect: %+v, %v", rep, err)
	}
	n1 := 0
	for n, data := range rawFiles(t, raw) {
		if keyID(data) != "k1" {
			t.Errorf("%s is under %q before rekey", n, keyID(data))
		}
		n1++
	}
	es, err := encrypt.New(raw, []encrypt.Key{k2, k1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := encrypt.Rekey(ctx, es, policyData...); err != nil || n != n1 {
		t.Fatalf("rekey: %d of %d files, %v", n, n1, err)
	}
	for n, data := range rawFiles(t, raw) {
		if keyID(data) != "k2" {
			t.Errorf("%s is under %q after rekey", n, keyID(data))
		}
	}
	st2 := newStack(t, raw, opts(k2))
	if _, err := expiry.Restore(ctx, st2.belowExpiry, "/memories/c/a/old.md", clock.Now()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for p, want := range map[string]string{"c/a/old.md": "old text", "c/a/keep.md": "kept"} {
		if got, err := st2.top.ReadFile(ctx, p, 1<<20); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", p, got, err)
		}
	}
	for p, want := range map[string]string{"/memories/a/keep.md": "kept", "/memories/b/del.md": "to delete"} {
		vs, err := history.Versions(ctx, st2.belowHistory, p)
		if err != nil || len(vs) == 0 {
			t.Fatalf("versions of %s: %v, %v", p, vs, err)
		}
		if got, err := history.Read(ctx, st2.belowHistory, p, vs[len(vs)-1].N); err != nil || string(got) != want {
			t.Errorf("%s version %d: %q, %v", p, vs[len(vs)-1].N, got, err)
		}
	}
	other, err := encrypt.New(raw, []encrypt.Key{k2}, &encrypt.Options{Tenant: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ReadFile(ctx, "c/a/keep.md", 1<<20); err == nil {
		t.Error("the copied file opens in another tenant's wrapper")
	}
}
