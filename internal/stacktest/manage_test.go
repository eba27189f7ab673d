package stacktest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/storetest"
)

// policyData are the root entries the policies keep, as memtool rekey
// names them.
var policyData = []string{history.DirName, expiry.IndexName, expiry.TrashName}

// rawFiles returns every regular file of base with its stored bytes,
// the policies' entries included.
func rawFiles(t *testing.T, base memtool.Store) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	visit := func(name string, fi memtool.FileInfo) error {
		if fi.IsRegular() {
			data, err := base.ReadFile(ctx, name, 1<<30)
			if err != nil {
				return err
			}
			out[name] = data
		}
		return nil
	}
	entries, err := base.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	roots := map[string]bool{}
	for _, e := range entries {
		roots[e.Name] = true
	}
	for _, n := range policyData {
		roots[n] = true
	}
	for n := range roots {
		if err := memtool.Walk(ctx, base, n, visit); err != nil && !errors.Is(err, memtool.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return out
}

// keyID is the ID of the key a stored file names.
func keyID(data []byte) string {
	if len(data) < 20 {
		return ""
	}
	return string(bytes.TrimRight(data[4:20], "\x00"))
}

// The used stack, then gc, restore and rekey: every file the policies
// keep (versions, the history counter, the access index, the expiry
// trash) ends under the new key, and the memory reads the same.
func TestRekeyCoversEveryPolicyEntry(t *testing.T) {
	for name, base := range bases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			raw := base()
			k1, _ := encrypt.NewKey("k1")
			k2, _ := encrypt.NewKey("k2")
			st := newStack(t, raw, stackOptions{keys: []encrypt.Key{k1}, expiry: &expiry.Options{Now: clock.Now}, history: &history.Options{Now: clock.Now, MaxAge: -1}})
			st.mustRun(t, create("/memories/a/old.md", "old text"))
			st.mustRun(t, create("/memories/a/keep.md", "keep"))
			st.mustRun(t, create("/memories/b/del.md", "to delete"))
			st.mustRun(t, map[string]any{"command": "str_replace", "path": "/memories/a/keep.md", "old_str": "keep", "new_str": "kept"})
			st.mustRun(t, map[string]any{"command": "delete", "path": "/memories/b"})
			clock.Add(40 * 24 * time.Hour)
			st.mustRun(t, map[string]any{"command": "view", "path": "/memories/a/keep.md"})
			rep, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clock.Now})
			if err != nil || len(rep.Expired) != 1 {
				t.Fatalf("collect: %+v, %v", rep, err)
			}
			before := rawFiles(t, raw)
			n1 := 0
			for n, data := range before {
				if keyID(data) == "k1" {
					n1++
				} else if n != ".memtool-policy.json" {
					t.Errorf("%s is under %q before rekey", n, keyID(data))
				}
			}
			es, err := encrypt.New(raw, []encrypt.Key{k2, k1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			n, err := encrypt.Rekey(ctx, es, policyData...)
			if err != nil {
				t.Fatalf("rekey: %v", err)
			}
			if n != n1 {
				t.Errorf("rekey rewrote %d files, %d were under k1", n, n1)
			}
			for n, data := range rawFiles(t, raw) {
				if keyID(data) != "k2" {
					t.Errorf("%s is under %q after rekey", n, keyID(data))
				}
			}
			st2 := newStack(t, raw, stackOptions{keys: []encrypt.Key{k2}, expiry: &expiry.Options{Now: clock.Now}, history: &history.Options{Now: clock.Now, MaxAge: -1}})
			if _, err := expiry.Restore(ctx, st2.belowExpiry, "/memories/a/old.md", clock.Now()); err != nil {
				t.Fatalf("restore: %v", err)
			}
			for p, want := range map[string]string{"a/old.md": "old text", "a/keep.md": "kept"} {
				got, err := st2.top.ReadFile(ctx, p, 1<<20)
				if err != nil || string(got) != want {
					t.Errorf("%s: %q, %v", p, got, err)
				}
			}
			for p, want := range map[string]string{"/memories/a/keep.md": "keep", "/memories/b/del.md": "to delete"} {
				vs, err := history.Versions(ctx, st2.belowHistory, p)
				if err != nil || len(vs) == 0 {
					t.Fatalf("versions of %s: %v, %v", p, vs, err)
				}
				got, err := history.Read(ctx, st2.belowHistory, p, vs[len(vs)-1].N)
				if err != nil || string(got) != want {
					t.Errorf("%s version %d: %q, %v", p, vs[len(vs)-1].N, got, err)
				}
			}
		})
	}
}

// What the policies keep (versions, the access index, the expiry trash)
// is neither shown to the model nor counted against its quota.
func TestPolicyEntriesNotCountedNorShown(t *testing.T) {
	for name, base := range bases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st := newStack(t, base(), stackOptions{limits: &limits.Options{MaxFiles: 3, MaxBytes: 30}, expiry: &expiry.Options{Now: clock.Now}, history: &history.Options{Now: clock.Now, MaxAge: -1}})
			st.mustRun(t, create("/memories/a", strings.Repeat("a", 10)))
			st.mustRun(t, create("/memories/b", strings.Repeat("b", 10)))
			st.mustRun(t, create("/memories/c", strings.Repeat("c", 10)))
			st.mustRun(t, map[string]any{"command": "str_replace", "path": "/memories/a", "old_str": strings.Repeat("a", 10), "new_str": strings.Repeat("A", 10)})
			st.mustRun(t, map[string]any{"command": "delete", "path": "/memories/b"})
			clock.Add(40 * 24 * time.Hour)
			st.mustRun(t, map[string]any{"command": "view", "path": "/memories/a"})
			if _, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clock.Now}); err != nil {
				t.Fatal(err)
			}
			// a is left: 1 file, 10 bytes; two more of 10 fit.
			st.mustRun(t, create("/memories/d", strings.Repeat("d", 10)))
			st.mustRun(t, create("/memories/e", strings.Repeat("e", 10)))
			if res := st.run(t, create("/memories/f", "f")); !res.IsError || !strings.Contains(res.Text, "Limit exceeded") {
				t.Errorf("a fourth file: %q", res.Text)
			}
			res := st.mustRun(t, map[string]any{"command": "view", "path": "/memories"})
			if strings.Contains(res.Text, ".memtool") {
				t.Errorf("view shows the policies' entries:\n%s", res.Text)
			}
			files, size := storetest.Usage(t, st.top)
			if files != 3 || size != 30 {
				t.Errorf("the model's memory holds %d entries, %d bytes; want 3, 30", files, size)
			}
		})
	}
}
