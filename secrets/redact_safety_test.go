package secrets_test

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/storetest"
)

// stripeMax is a Stripe key as long as the rule matches (99 characters
// after the prefix): a token right after it does not stand alone.
var stripeMax = "sk_live_" + strings.Repeat("a1B2c3D4e5", 10)[:99]

// TestRedactLeavesNoUncoveredSecret: cutting a secret out changes what is
// next to the text after it. A GitHub token glued to a Stripe key (not
// found: it does not stand alone) and a card number after a key and a
// dash (taken for part of a longer number) must not be stored as they are
// once the key before them is replaced: the stored file holds no secret.
func TestRedactLeavesNoUncoveredSecret(t *testing.T) {
	for name, text := range map[string]string{
		"token glued to a key": "keys: " + stripeMax + github + "\n",
		"card after a key":     "keys: " + stripe + "9-4111111111111111 end\n",
		"both":                 "a " + stripeMax + github + " b " + stripe + "9-" + master + "\n",
	} {
		inner := memstore.New()
		mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: secrets.Redact}), nil)
		r := mem.Run(context.Background(), js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": text}))
		if r.IsError {
			t.Fatalf("%s: %s", name, r.Text)
		}
		got := strings.TrimPrefix(storetest.Snapshot(t, inner)["a.md"], "file:")
		if f := secrets.Scan([]byte(got)); f != nil || strings.Contains(got, github[4:]) || strings.Contains(got, "1111111111") {
			t.Errorf("%s: Redact stored %q, which holds %+v", name, got, f)
		}
	}
}

// TestRedactedPrefixIsNoAllowMarker: "[REDACTED" at the start of a URL's
// password does not mask what follows it; only a password of asterisks
// counts as masked. Under Reject the write is refused; under Redact the
// whole password is replaced.
func TestRedactedPrefixIsNoAllowMarker(t *testing.T) {
	text := "db postgres://admin:[REDACTED]Sup3rS3cretPw@db.internal:5432/prod\n"
	inner := memstore.New()
	r := memtool.New(secrets.New(inner, nil), nil).Run(context.Background(), js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": text}))
	if !r.IsError || !strings.Contains(r.Text, "a password in a URL on line 1") {
		t.Errorf("Reject: create answered %q", r.Text)
	}
	mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: secrets.Redact}), nil)
	if r := mem.Run(context.Background(), js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": text})); r.IsError {
		t.Fatal(r.Text)
	}
	want := "file:db postgres://admin:[REDACTED password in a URL]@db.internal:5432/prod\n"
	if got := storetest.Snapshot(t, inner)["a.md"]; got != want {
		t.Errorf("Redact stored %q, want %q", got, want)
	}
}

// TestRedactRefusesKeyHeaderWithoutEnd: under Redact, an edit that adds a
// private key header with no END line after it (or with lines that are no
// key's between it and one) is refused, naming the reason, and the file
// keeps every line it had: redacting to the end of the text would destroy
// lines the edit never touched while the model is told it succeeded.
func TestRedactRefusesKeyHeaderWithoutEnd(t *testing.T) {
	inner := memstore.New()
	mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: secrets.Redact}), nil)
	ctx := context.Background()
	body := "# notes\n" + strings.Repeat("important line\n", 5)
	withEnd := body + "-----END PRIVATE KEY-----\nlast line\n" // an END line alone is no secret
	for _, file := range []string{body, withEnd} {
		if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": file})); r.IsError {
			t.Fatal(r.Text)
		}
		before := storetest.Snapshot(t, inner)
		r := mem.Run(ctx, js(map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "PEM files start with -----BEGIN PRIVATE KEY----- ."}))
		if !r.IsError || !strings.Contains(r.Text, "a private key on line 2 without an END line") || !strings.Contains(r.Text, "nothing was changed") {
			t.Errorf("insert answered %q, want a refusal naming the header without its END line", r.Text)
		}
		if after := storetest.Snapshot(t, inner); !reflect.DeepEqual(before, after) {
			t.Errorf("refused, yet a.md went from %q to %q", before["a.md"], after["a.md"])
		}
		mem.Run(ctx, js(map[string]any{"command": "delete", "path": "/memories/a.md"}))
	}
}

// TestLongHeaderJWTRedactedWhole: a JSON Web Token whose header is far
// longer than the window the other rules look at (an x5c certificate
// chain) is found, and its span is the whole token.
func TestLongHeaderJWTRedactedWhole(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"RS256","typ":"JWT","x5c":["` + strings.Repeat("MIIC", 400) + `"]}`))
	payload := enc([]byte(`{"sub":"1234567890","name":"John Doe","iat":1516239022}`))
	tok := header + "." + payload + "." + strings.Repeat("SflKxwRJSMeKKF2QT4fw", 5)
	text := "token: " + tok + " end\n"
	f := secrets.Scan([]byte(text))
	if len(f) != 1 || f[0].Kind != "a JSON Web Token" || text[f[0].Start:f[0].End] != tok {
		t.Errorf("a JWT with a %d-byte header: got %+v, want the whole token", len(header), f)
	}
}
