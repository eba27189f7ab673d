package keys_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/keys"
)

// TestCopy: Copy gives each key it copies to another keyring (every kind
// to every other) the same token; it copies what keep accepts, keeps a
// key's revocation, revokes in the target a key revoked in the source
// since an earlier copy, and never overwrites another key of the same id.
func TestCopy(t *testing.T) {
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	for from, mkFrom := range stores(t) {
		for to, mkTo := range stores(t) {
			if from == to {
				continue
			}
			t.Run(from+"-"+to, func(t *testing.T) {
				dstURL := mkTo(t)
				src, dst := open(t, mkFrom(t), c), open(t, dstURL, c)
				tokens := map[string]string{}
				ids := map[string]string{}
				for _, nk := range []keys.NewKey{{Name: "aw", Tenant: "alice", Scope: keys.Write}, {Name: "br", Tenant: "bob", Scope: keys.Read}, {Name: "ar", Tenant: "alice", Scope: keys.Read}} {
					k, token, err := src.Add(ctx, nk)
					if err != nil {
						t.Fatal(err)
					}
					tokens[nk.Name], ids[nk.Name] = token, k.ID
				}
				if err := src.Revoke(ctx, ids["ar"]); err != nil {
					t.Fatal(err)
				}

				added, revoked, err := keys.Copy(ctx, dst, src, func(k keys.Key) bool { return k.Tenant == "bob" })
				if err != nil || len(added) != 1 || added[0].ID != ids["br"] || len(revoked) != 0 {
					t.Fatalf("Copy of bob's keys: %v %v %v", added, revoked, err)
				}
				verify := func(name string, ok bool) {
					t.Helper()
					// A keyring of its own: dst's cache keeps what it
					// last read of a key for a while.
					k, err := open(t, dstURL, c).Verify(ctx, tokens[name])
					if ok && (err != nil || k.ID != ids[name]) || !ok && !errors.Is(err, keys.ErrInvalidToken) {
						t.Errorf("Verify of %s on the target: %+v, %v; want it to open: %v", name, k, err, ok)
					}
				}
				verify("br", true)
				verify("aw", false)

				added, _, err = keys.Copy(ctx, dst, src, nil)
				if err != nil || len(added) != 2 {
					t.Fatalf("Copy of every key: %v %v", added, err)
				}
				verify("aw", true)
				verify("ar", false) // revoked in the source, copied revoked
				list, _ := dst.List(ctx)
				if len(list) != 3 {
					t.Errorf("the target lists %d keys, want 3: %+v", len(list), list)
				}

				if err := src.Revoke(ctx, ids["aw"]); err != nil {
					t.Fatal(err)
				}
				added, revoked, err = keys.Copy(ctx, dst, src, nil)
				if err != nil || len(added) != 0 || len(revoked) != 1 || revoked[0].ID != ids["aw"] {
					t.Fatalf("Copy after a revoke: %v %v %v", added, revoked, err)
				}
				verify("aw", false)
			})
		}
	}
}

// TestCopyNeverOverwrites: a key id the target holds with another secret
// is an error, and the target's key keeps working.
func TestCopyNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	dir := stores(t)["directory"](t)
	src := open(t, dir, c)
	k, _, err := src.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Write})
	if err != nil {
		t.Fatal(err)
	}
	// The target: a key file holding a key of the same id, another secret.
	other := stores(t)["directory"](t)
	data, err := os.ReadFile(dir + ".keys")
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(data, &recs); err != nil || len(recs) != 1 {
		t.Fatalf("the key file: %v %s", err, data)
	}
	recs[0]["sha256"] = strings.Repeat("0", 64)
	if data, err = json.Marshal(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other+".keys", data, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(other + ".keys")
	dst := open(t, other, c)
	if _, _, err := keys.Copy(ctx, dst, src, nil); err == nil || !strings.Contains(err.Error(), k.ID) {
		t.Fatalf("Copy onto another key of id %s: %v", k.ID, err)
	}
	if after, _ := os.ReadFile(other + ".keys"); string(after) != string(before) {
		t.Errorf("the target's key file changed:\n%s\n%s", before, after)
	}
}
