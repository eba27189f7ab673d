package keys_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/keys"
	_ "modernc.org/sqlite"
)

// TestDirectoryMalformedRecord: one malformed record in a directory
// store's key file (a hand edit) is never used as a key, and the other
// keys keep working: Verify, Add and Revoke go on, List returns them
// with an error wrapping ErrMalformed that names the bad record, and a
// change made by the keyring keeps the bad record as written, for its
// owner to mend.
func TestDirectoryMalformedRecord(t *testing.T) {
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	url := filepath.Join(t.TempDir(), "memories")
	k := open(t, url, c)
	alice, aliceToken, err := k.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Write})
	if err != nil {
		t.Fatal(err)
	}
	bob, bobToken, err := k.Add(ctx, keys.NewKey{Tenant: "bob", Scope: keys.Write})
	if err != nil {
		t.Fatal(err)
	}

	// The hand edit: bob's hash loses a digit, and records are added
	// whose secret is known but which are no valid key: no tenant, an
	// unknown scope, an id that is no key id, a field of the wrong type,
	// and two records of one id.
	path := url + ".keys"
	var recs []map[string]any
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r["id"] == bob.ID {
			r["sha256"] = r["sha256"].(string)[1:]
		}
	}
	secret := strings.Repeat("ab", 32)
	sum := sha256.Sum256([]byte(secret))
	hash := hex.EncodeToString(sum[:])
	forged := map[string]map[string]any{
		"00000000000000a1": {"tenant": "", "scope": "write"},
		"00000000000000a2": {"tenant": "carol", "scope": "root"},
		"00000000000000a3": {"tenant": "carol", "scope": "write", "created_ms": "yesterday"},
		"00000000000000a4": {"tenant": "../carol", "scope": "write"},
		"00000000000000a5": {"tenant": "carol", "scope": "write"},
	}
	for id, r := range forged {
		r["id"], r["sha256"] = id, hash
		recs = append(recs, r)
	}
	recs = append(recs, map[string]any{"id": "00000000000000a5", "tenant": "dave", "scope": "admin", "sha256": hash})
	recs = append(recs, map[string]any{"id": "not-an-id", "tenant": "carol", "scope": "write", "sha256": hash})
	edited, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edited, 0o600); err != nil {
		t.Fatal(err)
	}

	other := open(t, url, c) // a replica that never read the file before
	for _, ring := range []*keys.Keyring{k, other} {
		c.Add(keys.DefaultCacheFor)
		if got, err := ring.Verify(ctx, aliceToken); err != nil || got.ID != alice.ID {
			t.Fatalf("a good key, beside a malformed record: %+v, %v", got, err)
		}
		if _, err := ring.Verify(ctx, bobToken); err == nil {
			t.Error("a key whose record is malformed was accepted")
		}
		for id := range forged {
			if got, err := ring.Verify(ctx, "mt_"+id+"_"+secret); err == nil {
				t.Errorf("the malformed record %s was accepted as a key: %+v", id, got)
			}
		}
	}

	list, err := other.List(ctx)
	if !errors.Is(err, keys.ErrMalformed) || !strings.Contains(err.Error(), bob.ID) {
		t.Errorf("List with malformed records: error %v, want ErrMalformed naming %s", err, bob.ID)
	}
	if err != nil && strings.Contains(err.Error(), hash) {
		t.Errorf("List's error shows a hash: %v", err)
	}
	if len(list) != 1 || list[0].ID != alice.ID {
		t.Errorf("List with malformed records: %+v, want alice's key alone", list)
	}

	carol, carolToken, err := other.Add(ctx, keys.NewKey{Tenant: "carol", Scope: keys.Read})
	if err != nil {
		t.Fatalf("Add beside a malformed record: %v", err)
	}
	if err := other.Revoke(ctx, alice.ID); err != nil {
		t.Fatalf("Revoke beside a malformed record: %v", err)
	}
	if _, err := other.Verify(ctx, carolToken); err != nil {
		t.Errorf("the key added beside a malformed record: %v", err)
	}
	if _, err := other.Verify(ctx, aliceToken); !errors.Is(err, keys.ErrInvalidToken) {
		t.Errorf("a key revoked beside a malformed record: %v", err)
	}
	if err := other.Revoke(ctx, bob.ID); err == nil || errors.Is(err, keys.ErrNotFound) {
		t.Errorf("Revoke of a malformed record: %v, want an error that is not ErrNotFound", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{bob.ID, "00000000000000a1", "00000000000000a5", "not-an-id", `"yesterday"`, `"dave"`, carol.ID} {
		if !strings.Contains(string(after), want) {
			t.Errorf("after Add and Revoke the key file lost %s:\n%s", want, after)
		}
	}
}

// TestSQLMalformedRow: a row of memtool_keys changed by hand into no
// valid key (no tenant), or holding a value of the wrong type in a
// column (revoked = 'yes', which SQLite keeps as written), is never used
// as a key; List returns the other keys with an error wrapping
// ErrMalformed that names it, instead of failing whole.
func TestSQLMalformedRow(t *testing.T) {
	for _, damage := range []string{`tenant = ''`, `revoked = 'yes'`} {
		t.Run(damage, func(t *testing.T) {
			ctx := context.Background()
			c := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			file := filepath.Join(t.TempDir(), "m.db")
			k := open(t, "sqlite://"+file, c)
			alice, aliceToken, err := k.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Write})
			if err != nil {
				t.Fatal(err)
			}
			bob, bobToken, err := k.Add(ctx, keys.NewKey{Tenant: "bob", Scope: keys.Admin})
			if err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", file)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE memtool_keys SET `+damage+` WHERE id = ?`, bob.ID); err != nil {
				t.Fatal(err)
			}
			other := open(t, "sqlite://"+file, c)
			if got, err := other.Verify(ctx, bobToken); err == nil {
				t.Errorf("a damaged key record was accepted: %+v", got)
			}
			if got, err := other.Verify(ctx, aliceToken); err != nil || got.ID != alice.ID {
				t.Errorf("a good key beside a damaged row: %+v, %v", got, err)
			}
			list, err := other.List(ctx)
			if !errors.Is(err, keys.ErrMalformed) || !strings.Contains(fmt.Sprint(err), bob.ID) || len(list) != 1 || list[0].ID != alice.ID {
				t.Errorf("List beside a damaged row: %+v, %v; want alice's key and ErrMalformed naming %s", list, err, bob.ID)
			}
		})
	}
}
