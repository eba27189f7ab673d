package secrets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
)

// TestRenameDirJoinsSecret: renaming a directory gives every entry below
// it a new path. A Slack webhook URL spans path components
// (hooks.slack.com/services/…), so a directory whose entries hold the rest
// of it, renamed to hooks.slack.com, would put the webhook in the names of
// the store if only the directory's new name were scanned. The rename is
// refused under either policy, and nothing moves.
func TestRenameDirJoinsSecret(t *testing.T) {
	rest := strings.TrimPrefix(slackHook, "https://hooks.slack.com/")
	for _, p := range []secrets.Policy{secrets.Reject, secrets.Redact} {
		inner := memstore.New()
		mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: p}), nil)
		ctx := context.Background()
		if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/x/" + rest, "file_text": "x"})); r.IsError {
			t.Fatalf("policy %d, create: %s", p, r.Text)
		}
		r := mem.Run(ctx, js(map[string]any{"command": "rename", "old_path": "/memories/x", "new_path": "/memories/hooks.slack.com"}))
		if !r.IsError || !strings.Contains(r.Text, "a Slack webhook URL") || strings.Contains(r.Text, rest) {
			t.Errorf("policy %d, rename: %q", p, r.Text)
		}
		err := memtool.Walk(ctx, inner, "", func(name string, _ memtool.FileInfo) error {
			if f := secrets.Scan([]byte(name)); f != nil {
				t.Errorf("policy %d: the store holds the name %q, with %s", p, name, f[0].Kind)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inner.Stat(ctx, "x/"+rest); err != nil {
			t.Errorf("policy %d: the refused rename moved the tree: %v", p, err)
		}
	}
}
