package secrets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
)

// TestBypassRedactGrowsPastFileSize: memtool writes no file over its
// MaxFileSize (1 MiB by default) in one call, but a placeholder can be
// longer than the secret it replaces: a 13-digit card number becomes
// "[REDACTED payment card number]". A create of 1 MiB of such numbers,
// within the limit as sent, became a file of 2.2 MiB under Redact, which
// no edit can then touch. Redact refuses a redaction that would take
// a file within Options.MaxFileSize (default memtool.DefaultMaxFileSize)
// over it; one that stays within it is written, and so is a larger one
// sent (PUT /v1/file takes files up to 16 MiB), which the limit is not
// for.
func TestBypassRedactGrowsPastFileSize(t *testing.T) {
	ctx := context.Background()
	const card = "4222222222222" // passes Luhn
	cards := func(n int) string { return strings.TrimSuffix(strings.Repeat(card+" ", n), " ") }
	big := cards(memtool.DefaultMaxFileSize / (len(card) + 1))
	inner := memstore.New()
	mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: secrets.Redact}), nil)
	r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/big.md", "file_text": big}))
	if !r.IsError || !strings.Contains(r.Text, "payment card number") || strings.Contains(r.Text, card) {
		t.Errorf("create of %d bytes of card numbers: %.200q, want a refusal", len(big), r.Text)
	}
	if fi, err := inner.Stat(ctx, "big.md"); err == nil {
		t.Errorf("the store holds big.md of %d bytes, over the limit of %d", fi.Size, memtool.DefaultMaxFileSize)
	}
	// A few cards, redacted: larger than sent, far within the limit.
	if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/few.md", "file_text": cards(3)})); r.IsError {
		t.Errorf("create of three card numbers: %s", r.Text)
	}
	// Under a lower limit of the wrapper's own, the same three are
	// refused, and a file over it as sent is written.
	mem = memtool.New(secrets.New(inner, &secrets.Options{Policy: secrets.Redact, MaxFileSize: 50}), nil)
	if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/few2.md", "file_text": cards(3)})); !r.IsError {
		t.Errorf("create of three card numbers under MaxFileSize 50: %s, want a refusal", r.Text)
	}
	if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/few3.md", "file_text": cards(3) + strings.Repeat(".", 50)})); r.IsError {
		t.Errorf("create of three card numbers in 92 bytes under MaxFileSize 50: %s", r.Text)
	}
}
