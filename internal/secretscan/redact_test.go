package secretscan

import (
	"strings"
	"testing"
)

var (
	stripeMax = "sk_live_" + strings.Repeat("a1B2c3D4e5", 10)[:99] // as long as the rule matches
	ghToken   = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
	stripeKey = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
	visaCard  = "4111111111111111"
)

// redactAll is Redact of Scan, failing the test if it gives up.
func redactAll(t *testing.T, text string) string {
	t.Helper()
	out, ok := Redact([]byte(text), Scan([]byte(text)))
	if !ok {
		t.Fatalf("Redact gave up on %q", text)
	}
	return string(out)
}

// TestScanFindsSecretGluedToAnother: a secret right after another one
// (a GitHub token glued to a Stripe key cut at the rule's 99 characters; a
// card number after a key, a digit and a dash) stands alone, as it will
// once the first is cut out, so one scan finds both.
func TestScanFindsSecretGluedToAnother(t *testing.T) {
	for text, want := range map[string]string{
		"keys: " + stripeMax + ghToken + ", more":                "keys: [REDACTED Stripe key][REDACTED GitHub token], more",
		"a " + stripeKey + "9-" + visaCard + " b":                "a [REDACTED Stripe key]-[REDACTED payment card number] b",
		"a " + stripeKey + "9-" + visaCard + "-4242424242424242": "a [REDACTED Stripe key]-[REDACTED payment card number]-[REDACTED payment card number]",
	} {
		if got := string(replace([]byte(text), Scan([]byte(text)))); got != want {
			t.Errorf("%q: one pass gives %q, want %q", text, got, want)
		}
	}
}

// googleChain is n Google API keys, each ending with a dash, glued: each
// but the last is followed by a letter, which could continue it, so it is
// not found until the key after it is cut out; Redact needs a pass for
// each.
func googleChain(n int) string {
	return "k " + strings.Repeat("AIza"+"SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBW-", n) + " end"
}

// TestRedactReachesFixedPoint: what Redact returns holds no secret, also
// where a replacement makes its neighbour one (a chain of keys that each
// end only once the next is cut out), and where a URL password starts
// like a replacement.
func TestRedactReachesFixedPoint(t *testing.T) {
	for _, text := range []string{
		"a " + stripeKey + "9-" + visaCard + " b",
		"a " + stripeKey + "9-" + strings.Repeat(visaCard+"-", 20) + visaCard + " b",
		googleChain(maxPasses),
		"postgres://admin:[REDACTED]Sup3rS3cretPw@db.internal/prod",
	} {
		got := redactAll(t, text)
		if f := Scan([]byte(got)); f != nil || strings.Contains(got, "1111") || strings.Contains(got, "Sup3r") || strings.Contains(got, "FMBW") {
			t.Errorf("%q redacted to %q, which holds %+v", text, got, f)
		}
	}
}

// TestRedactGivesUp: past maxPasses passes Redact reports false and
// returns no text, rather than text that may hold a secret.
func TestRedactGivesUp(t *testing.T) {
	text := []byte(googleChain(maxPasses + 1))
	if out, ok := Redact(text, Scan(text)); ok || out != nil {
		t.Errorf("got %q, %v; want nil, false", out, ok)
	}
}

// TestPrivateKeyExtent: a private key runs from its header to its END
// line. Without an END line after the header, or with another -----BEGIN
// or a line of prose first, it is open: its span is the header's line,
// and the lines after it are kept.
func TestPrivateKeyExtent(t *testing.T) {
	const (
		header = "-----BEGIN RSA PRIVATE KEY-----"
		body   = "\nProc-Type: 4,ENCRYPTED\nMIIEpAIBAAKCAQEA7bq\n\nqWx8ZP3h==\n"
		end    = "-----END RSA PRIVATE KEY-----"
	)
	for _, c := range []struct {
		text, span string
		open       bool
	}{
		{"x " + header + body + end + " y", header + body + end, false},
		{"x " + header + " (no end)\nnotes\nmore notes\n", header + " (no end)", true},
		{"x " + header + "\nnotes, in prose\n" + end + "\n", header, true},
		{"x " + header + "\n-----BEGIN CERTIFICATE-----\nMIIB\n" + end, header, true},
		{"x " + header + "\n-----END CERTIFICATE-----\n" + body + end, header, true},
	} {
		f := Scan([]byte(c.text))
		if len(f) != 1 || c.text[f[0].Start:f[0].End] != c.span || f[0].Open != c.open {
			t.Errorf("%q: got %+v, want the span %q, open %v", c.text, f, c.span, c.open)
		}
	}
}

// TestPrivateKeyHeader: the header's label is at most 100 bytes of
// capitals, digits, blanks, _ and -, and ends at its last PRIVATE KEY
// followed by the closing dashes.
func TestPrivateKeyHeader(t *testing.T) {
	for text, want := range map[string]bool{
		"-----BEGIN PRIVATE KEY-----":                                 true,
		"-----BEGIN PGP PRIVATE KEY BLOCK-----":                       true,
		"-----BEGIN PRIVATE KEY PRIVATE KEY-----":                     true,
		"-----BEGIN " + strings.Repeat("X", 99) + "PRIVATE KEY-----":  true,
		"-----BEGIN " + strings.Repeat("X", 100) + "PRIVATE KEY-----": false,
		"-----BEGIN rsa PRIVATE KEY-----":                             false,
		"-----BEGIN PRIVATE KEY----":                                  false,
		"-----BEGIN PUBLIC KEY-----":                                  false,
	} {
		if got := Scan([]byte(text)) != nil; got != want {
			t.Errorf("%q: found %v, want %v", text, got, want)
		}
	}
}

// TestRedactGluedToWebhookOrSlackToken: a Slack webhook URL or rotating
// token glued to the end of another of its kind (whose tail runs up to
// the dot in the second one's prefix) is found and redacted too. It was
// skipped as part of the first, whose redaction then cut the prefix off
// the second and left its secret part in the text.
func TestRedactGluedToWebhookOrSlackToken(t *testing.T) {
	hook2 := "T11111111/B11111111/" + strings.Repeat("Y", 24)
	rotating := "xoxp-1-" + strings.Repeat("Mi0yLTEyMzQ1Njc4", 3)
	for text, secret := range map[string]string{
		"x hooks.slack.com/services/T00000000/B00000000/" + strings.Repeat("X", 24) + "hooks.slack.com/services/" + hook2 + " end": hook2,
		"x xoxb-2345678901-3456789012-" + strings.Repeat("AbCd", 6) + "-xoxe." + rotating + " end":                                 rotating,
	} {
		if got := redactAll(t, text); strings.Contains(got, secret) {
			t.Errorf("%q: redacted to %q, which keeps %q", text, got, secret)
		}
	}
}
