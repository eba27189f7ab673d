package keys_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/keys"
)

// FuzzKeyFile puts arbitrary bytes in a directory store's key file and
// verifies a token of the id 00000000000000a1 whose secret is known: it
// opens only as a key that is usable now, of a valid tenant and scope,
// from a file that is a JSON array; a key written first (a good record
// beside the one the fuzz adds) goes on working unless the file as a
// whole is no JSON array or the added record names its id too.
func FuzzKeyFile(f *testing.F) {
	const id = "00000000000000a1"
	secret := strings.Repeat("ab", 32)
	sum := sha256.Sum256([]byte(secret))
	hash := hex.EncodeToString(sum[:])
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, rec := range []string{
		`{"id":"` + id + `","tenant":"alice","scope":"write","sha256":"` + hash + `","created_ms":1}`,
		`{"id":"` + id + `","tenant":"alice","scope":"write","sha256":"` + hash + `","revoked_ms":null}`,
		`{"id":"` + id + `","tenant":"alice","scope":"admin","sha256":"` + hash[2:] + `"}`,
		`{"id":"` + id + `","tenant":"","scope":"write","sha256":"` + hash + `","expires_ms":-1}`,
		`{"id":"` + id + `","ID":"` + strings.ToUpper(id) + `","tenant":"bob","scope":"read","sha256":"` + hash + `"}`,
		`{"id":"` + id + `","tenant":"bob","scope":"read","sha256":"` + hash + `","expires_ms":9223372036854775807}`,
	} {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		ctx := context.Background()
		dir := filepath.Join(t.TempDir(), "m")
		k, err := keys.Open(ctx, dir, &keys.Options{Create: true, Now: func() time.Time { return now }, CacheFor: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		good, goodToken, err := k.Add(ctx, keys.NewKey{Tenant: "carol", Scope: keys.Read})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(dir + ".keys")
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.TrimRight(strings.TrimSpace(string(data)), "]") + "," + rec + "]"
		if err := os.WriteFile(dir+".keys", []byte(edited), 0o600); err != nil {
			t.Fatal(err)
		}
		var raws []json.RawMessage
		isArray := json.Unmarshal([]byte(edited), &raws) == nil
		key, err := k.Verify(ctx, "mt_"+id+"_"+secret)
		if err == nil {
			if key.ID != id || key.Usable(now) != nil || key.Tenant == "" || key.Scope < keys.Read || key.Scope > keys.Admin || !isArray {
				t.Fatalf("%s opened as %+v", rec, key)
			}
		}
		if _, err := k.Verify(ctx, goodToken); isArray && err != nil && !strings.Contains(rec, good.ID) {
			t.Fatalf("the good key, beside %s: %v", rec, err)
		}
		k.List(ctx)
	})
}
