package secrets_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/secrets"
)

// An edit that redaction would take past the file size limit is refused
// as a create is, on a directory store, and leaves the file as it was:
// a str_replace and an insert of card numbers into a file just within
// the limit. Under a limits policy below (memtool's order), a redaction
// past limits' own smaller max_file_size is refused there, and the file
// still holds what it held.
func TestRedactedEditPastFileSizeRefused(t *testing.T) {
	ctx := context.Background()
	const card = "4222222222222" // passes Luhn
	cards := strings.TrimSuffix(strings.Repeat(card+" ", 40), " ")
	for _, tc := range []struct {
		name  string
		max   int // the file is this size less 1,000 bytes
		wrap  func(memtool.Store) memtool.Store
		limit string
	}{
		{"no limits", memtool.DefaultMaxFileSize, func(s memtool.Store) memtool.Store { return s }, "1048576 bytes"},
		{"limits below", 100_000, func(s memtool.Store) memtool.Store {
			return limits.New(s, &limits.Options{MaxFileSize: 100_000})
		}, "100,000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fs, err := filestore.Open(dir, nil)
			must.Succeed(t, err)
			mem := memtool.New(secrets.New(tc.wrap(fs), &secrets.Options{Policy: secrets.Redact}), nil)
			body := strings.Repeat("x", tc.max-1000-len("END")) + "END"
			if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": body})); r.IsError {
				t.Fatalf("create: %s", r.Text)
			}
			for _, cmd := range []map[string]any{
				{"command": "str_replace", "path": "/memories/a.md", "old_str": "END", "new_str": cards},
				{"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": cards},
			} {
				r := mem.Run(ctx, js(cmd))
				if !r.IsError || strings.Contains(r.Text, card) || !strings.Contains(r.Text, tc.limit) {
					t.Errorf("%s of %d card numbers (%d bytes, %d redacted): %.300q, want a refusal naming the limit", cmd["command"], 40, len(cards), 40*len("[REDACTED payment card number]"), r.Text)
				}
				data, err := os.ReadFile(filepath.Join(dir, "a.md"))
				must.Succeed(t, err)
				if string(data) != body {
					t.Fatalf("after the %s the file holds %d bytes, want the %d it held", cmd["command"], len(data), len(body))
				}
			}
		})
	}
}
