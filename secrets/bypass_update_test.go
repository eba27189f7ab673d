package secrets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
)

// TestBypassEditOfSecretPath: a path that holds a secret is refused for
// an edit too, also of a file that does not exist. The wrapper passed
// such an Update down, and package expiry below it records the use of
// the name in its index before the edit runs: str_replace on
// /memories/ghp_… wrote the token into the store's .memtool-expiry.json,
// though the same path was refused to create.
func TestBypassEditOfSecretPath(t *testing.T) {
	const token = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	ctx := context.Background()
	for _, p := range []secrets.Policy{secrets.Reject, secrets.Redact} {
		inner := memstore.New()
		mem := memtool.New(secrets.New(expiry.New(inner, nil), &secrets.Options{Policy: p}), nil)
		for _, cmd := range []map[string]any{
			{"command": "str_replace", "path": "/memories/" + token, "old_str": "a", "new_str": "b"},
			{"command": "insert", "path": "/memories/d/" + token + ".md", "insert_line": 0, "insert_text": "x"},
		} {
			r := mem.Run(ctx, js(cmd))
			if !r.IsError || !strings.Contains(r.Text, "a GitHub token") || strings.Contains(r.Text, token) {
				t.Errorf("policy %d, %s: %q, want the refusal of the path", p, cmd["command"], r.Text)
			}
		}
		if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/ok.md", "file_text": "x"})); r.IsError {
			t.Fatalf("policy %d, create: %s", p, r.Text)
		}
		data, err := inner.ReadFile(ctx, expiry.IndexName, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if f := secrets.Scan(data); f != nil {
			t.Errorf("policy %d: the access index holds %s: %s", p, f[0].Kind, data)
		}
	}
}
