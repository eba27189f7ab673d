package secrets_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/storetest"
)

// The tokens below have the real formats, built from parts so that this
// file does not itself look like it leaks them. The AWS pair, the JWT and
// the Stripe key are the providers' own documentation examples; the cards
// are the card networks' test numbers.
var (
	aws       = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret = "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	anthropic = "sk-ant-" + "api03-" + strings.Repeat("Ab3_-x9Z", 11) + "Q7kAA"
	openaiOld = "sk-" + "Xy7Ab3Cd9Ef1Gh2Ij4Kl" + "T3BlbkFJ" + "Mn5Op6Qr7St8Uv9Wx0Yz"
	openaiNew = "sk-" + "proj-" + strings.Repeat("Zq8_Lm3-Rt", 7) + "T3BlbkFJ" + strings.Repeat("Yp2-Kd7_Wx", 7)
	github    = "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
	githubPAT = "github_pat_" + "11ABCDEFG0aB3dE5gH7jk9_" + strings.Repeat("aB3dE5gH7j", 5) + "Xy9Zw8Vu7"
	gitlab    = "glpat-" + "xYz12AbC-34dEf_56GhIj"
	slack     = "xoxb-" + "2345678901-3456789012-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	slackHook = "https://hooks.slack.com/" + "services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	stripe    = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
	google    = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	rsaKey    = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\nqWx8ZP3h==\n-----END RSA PRIVATE KEY-----"
	sshKey    = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	urlPass   = "postgres://app:" + "s3cr3t-Pa55@db.internal:5432/prod"
	visa      = "4111 1111 " + "1111 1111"
	master    = "5555-5555-" + "5555-4444"
	amex      = "3782822" + "46310005"
)

var secretCases = []struct {
	name, token, kind string
}{
	{"aws access key", aws, "an AWS access key ID"},
	{"aws secret key", awsSecret, "an AWS secret access key"},
	{"anthropic", anthropic, "an Anthropic API key"},
	{"openai legacy", openaiOld, "an OpenAI API key"},
	{"openai project", openaiNew, "an OpenAI API key"},
	{"github classic", github, "a GitHub token"},
	{"github fine-grained", githubPAT, "a GitHub token"},
	{"gitlab", gitlab, "a GitLab token"},
	{"slack bot", slack, "a Slack token"},
	{"slack webhook", slackHook, "a Slack webhook URL"},
	{"stripe", stripe, "a Stripe key"},
	{"google", google, "a Google API key"},
	{"rsa private key", rsaKey, "a private key"},
	{"openssh private key", sshKey, "a private key"},
	{"jwt", jwt, "a JSON Web Token"},
	{"password in url", urlPass, "a password in a URL"},
	{"visa", visa, "a payment card number"},
	{"mastercard", master, "a payment card number"},
	{"amex", amex, "a payment card number"},
	// Variants: a fixed-length token followed by a byte that cannot
	// continue it, a card written with its expiry or code, Slack's
	// app-level token, a URL with a password and no user name (Redis).
	{"github classic before a dash", github + "-old", "a GitHub token"},
	{"github classic before an underscore", github + "_old", "a GitHub token"},
	{"aws key in a file name", "notes-" + aws + "-2024.md", "an AWS access key ID"},
	{"aws secret key before a dash", awsSecret + "-", "an AWS secret access key"},
	{"aws secret key, camel case", "secretAccessKey: '" + awsSecret[len("aws_secret_access_key = "):] + "'", "an AWS secret access key"},
	{"aws secret key, upper case", "SECRET_ACCESS_KEY=" + awsSecret[len("aws_secret_access_key = "):], "an AWS secret access key"},
	{"aws secret key, mixed case", "Aws_Secret_Access_Key = " + awsSecret[len("aws_secret_access_key = "):], "an AWS secret access key"},
	{"card with its expiry", visa + " 12/28", "a payment card number"},
	{"card with its code", "4111111111111111" + " 123", "a payment card number"},
	{"slack app-level token", "xapp-" + "1-A0123456789-1234567890123-" + strings.Repeat("0a1b2c3d", 8), "a Slack token"},
	{"password in url without user", "redis://:" + "s3cr3t-Pa55@cache.internal:6379", "a password in a URL"},
	// Forms past the first rules: a JWT longer than the scan's window,
	// Slack's rotating tokens, OpenAI's sk-None- keys.
	{"long jwt", longJWT, "a JSON Web Token"},
	{"slack rotating token", "xoxe.xoxp-" + "1-" + strings.Repeat("Mi0yLTEyMzQ1Njc4", 8), "a Slack token"},
	{"slack refresh token", "xoxe-" + "1-" + strings.Repeat("My0xLTEyMzQ1Njc4", 8), "a Slack token"},
	{"openai none key", "sk-" + "None-" + strings.Repeat("Zq8Lm3Rt", 4) + "T3BlbkFJ" + strings.Repeat("Yp2Kd7Wx", 4), "an OpenAI API key"},
}

// longJWT is a JSON Web Token whose header and claims are longer than the
// window after an anchor that the scan looks at (an RS256 token with a
// key id and many claims, as Azure issues).
var longJWT = "eyJ" + strings.Repeat("hbGciOiJSUzI1NiIsImtpZCI6", 8) + "." + "eyJ" + strings.Repeat("zdWIiOiIxMjM0NTY3ODkwIiwicm9sZXMiOlsiYSJdfQ", 20) + "." + strings.Repeat("SflKxwRJSMeKKF2QT4fwpMeJf36POk6y", 10)

// A long JWT is redacted whole: what stays of it (claims, the signature)
// is not a credential, but no part that is is left.
func TestLongJWTRedactedWhole(t *testing.T) {
	text := "token: " + longJWT + " end\n"
	f := secrets.Scan([]byte(text))
	if len(f) != 1 || text[f[0].Start:f[0].End] != longJWT {
		t.Errorf("got %+v, want the whole token (%d bytes from %d)", f, len(longJWT), len("token: "))
	}
}

// nearMisses look like secrets and are not: they must pass.
var nearMisses = []string{
	"AKIA" + "IOSFODNN7EXAMPL",                       // one character short
	"AKIA" + "IOSFODNN7EXAMPLE1",                     // one too many
	"xAKIA" + "IOSFODNN7EXAMPLE",                     // inside a word
	"akia" + "iosfodnn7example",                      // lower case
	"aws_secret_access_key = <from the vault>",       // no key
	"sk-ant-" + "api03-short",                        // too short
	"sk-" + "proj-abcdefghijklmnopqrstuvwxyz",        // no OpenAI marker
	"ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8",   // 35 characters
	"ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8RS", // 37 characters
	"glpat-" + "short",
	"xoxb-" + "not-a-token",
	"sk_live_" + "abc",
	"AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBW", // 34 characters
	"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
	"-----BEGIN CERTIFICATE-----",
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",               // a header alone
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIi", // claims too short to be a token's
	"xoxe-" + "1-short",
	"https://user@example.com/path",
	"https://example.com:8080/a@b",
	"postgres://app:" + "****@db.internal/prod",
	"mailto:someone@example.com",
	"4111 1111 1111 " + "1112",                      // fails Luhn
	"0000 0000 0000 " + "0000",                      // passes Luhn, no card brand
	"order 12345678" + "90123456 shipped",           // no brand, Luhn fails
	"2026-11-30 04:03:50 and 2026-12-01 05:00:00",   // timestamps
	"call +1 555 123 4567 or 020 7946 0958",         // phone numbers
	"version 4.111111111111111",                     // a decimal
	"ID-4111111111111111x",                          // inside a word
	"AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY-", // 40 characters
	"github_pat_" + "11ABCDEFG0aB3dE5gH7jk9_" + strings.Repeat("aB3dE5gH7j", 5) + "Xy9Zw8Vu7_", // 83
}

func TestScanFinds(t *testing.T) {
	for _, c := range secretCases {
		text := "# Notes\n\nsomething about the deploy\nkey: " + c.token + " (do not share)\nmore\n"
		f := secrets.Scan([]byte(text))
		if len(f) != 1 || f[0].Kind != c.kind || f[0].Line != 4 {
			t.Errorf("%s: got %+v, want one %q on line 4", c.name, f, c.kind)
			continue
		}
		got := text[f[0].Start:f[0].End]
		if c.kind == "a password in a URL" {
			// The password alone: the URL's other parts are kept.
			if got != "s3cr3t-Pa55" {
				t.Errorf("%s: span %q, want the password alone", c.name, got)
			}
		} else if !strings.Contains(c.token, got) || len(got) < 13 {
			t.Errorf("%s: span %q is not the token, or a part of it long enough to be its secret", c.name, got)
		}
	}
}

func TestScanPassesNearMisses(t *testing.T) {
	for _, s := range nearMisses {
		if f := secrets.Scan([]byte("text " + s + " text\n")); f != nil {
			t.Errorf("%q: false positive %+v", s, f)
		}
	}
}

// TestWrapper runs the wrapper suite under both policies. A name with a
// secret is refused under both; content with one only by Reject (Redact
// writes it redacted).
func TestWrapper(t *testing.T) {
	names := []storetest.Refusal{
		{Name: "SecretInMkdir", Do: func(ctx context.Context, s memtool.Store) error {
			return s.Mkdir(ctx, "keys-"+github)
		}},
		{Name: "SecretInRename", Setup: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "notes.md", []byte("notes"), memtool.CreateOnly)
		}, Do: func(ctx context.Context, s memtool.Store) error {
			return s.(memtool.Renamer).Rename(ctx, "notes.md", "notes-"+aws+".md")
		}},
	}
	contents := []storetest.Refusal{
		{Name: "SecretWritten", Do: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "notes.md", []byte("key: "+aws+"\n"), memtool.CreateOnly)
		}},
		{Name: "SecretByUpdate", Setup: func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "notes.md", []byte("notes\n"), memtool.CreateOnly)
		}, Do: func(ctx context.Context, s memtool.Store) error {
			return s.Update(ctx, "notes.md", 1<<20, func(old []byte) ([]byte, error) { return append(old, stripe...), nil })
		}},
	}
	for p, refusals := range map[secrets.Policy][]storetest.Refusal{
		secrets.Reject: append(contents, names...),
		secrets.Redact: names,
	} {
		t.Run(fmt.Sprint("policy", p), func(t *testing.T) {
			backendtest.RunWrapper(t, func(t *testing.T, inner memtool.Store) memtool.Store {
				return secrets.New(inner, &secrets.Options{Policy: p})
			}, refusals)
		})
	}
}

func js(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

// TestRejectThroughMemory writes every token with create, str_replace and
// insert: each is refused with the kind and line, the token never appears in
// the answer, and the store is unchanged.
func TestRejectThroughMemory(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		mem := memtool.New(secrets.New(inner, nil), nil)
		ctx := context.Background()
		if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/notes.md", "file_text": "line one\nline two\nTOKEN\n"})); r.IsError {
			t.Fatal(r.Text)
		}
		for _, c := range secretCases {
			inputs := map[string][]byte{
				"create":      js(map[string]any{"command": "create", "path": "/memories/new/x.md", "file_text": "a\n" + c.token}),
				"str_replace": js(map[string]any{"command": "str_replace", "path": "/memories/notes.md", "old_str": "TOKEN", "new_str": c.token}),
				"insert":      js(map[string]any{"command": "insert", "path": "/memories/notes.md", "insert_line": 1, "insert_text": c.token}),
			}
			wantLine := map[string]int{"create": 2, "str_replace": 3, "insert": 2}
			for cmd, in := range inputs {
				before := storetest.Snapshot(t, inner)
				r := mem.Run(ctx, in)
				want := fmt.Sprintf("%s on line %d", c.kind, wantLine[cmd])
				if !r.IsError || !strings.HasPrefix(r.Text, "Error: Refused: ") || !strings.Contains(r.Text, want) {
					t.Errorf("%s by %s: got %q, want a refusal naming %q", c.name, cmd, r.Text, want)
				}
				for _, part := range strings.Split(c.token, "\n") {
					if len(part) > 12 && strings.Contains(r.Text, part[4:12]) {
						t.Errorf("%s by %s: the answer shows the secret: %q", c.name, cmd, r.Text)
					}
				}
				if after := storetest.Snapshot(t, inner); !reflect.DeepEqual(before, after) {
					t.Errorf("%s by %s: refused but the store changed", c.name, cmd)
				}
			}
		}
		for _, s := range nearMisses {
			r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/near.md", "file_text": s}))
			if r.IsError {
				t.Errorf("near miss %q refused: %s", s, r.Text)
			}
			mem.Run(ctx, js(map[string]any{"command": "delete", "path": "/memories/near.md"}))
		}
	})
}

// TestExactMessage pins the whole text the model reads.
func TestExactMessage(t *testing.T) {
	mem := memtool.New(secrets.New(memstore.New(), nil), nil)
	r := mem.Run(context.Background(), js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "x\n" + github + "\ny\n" + stripe}))
	want := "Error: Refused: /memories/a.md would contain what looks like a GitHub token on line 2, a Stripe key on line 4. Do not store credentials in memory; nothing was changed."
	if r.Text != want {
		t.Errorf("got  %q\nwant %q", r.Text, want)
	}
}

// TestAssembledOverTwoEdits: neither edit's new text is a secret, the file
// they leave is.
func TestAssembledOverTwoEdits(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		mem := memtool.New(secrets.New(inner, nil), nil)
		ctx := context.Background()
		half, rest := github[:20], github[20:]
		if secrets.Scan([]byte(half)) != nil || secrets.Scan([]byte(rest)) != nil {
			t.Fatal("a half is a secret on its own")
		}
		if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "token " + half + "END\n"})); r.IsError {
			t.Fatal(r.Text)
		}
		r := mem.Run(ctx, js(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "END", "new_str": rest}))
		if !r.IsError || !strings.Contains(r.Text, "a GitHub token on line 1") {
			t.Errorf("str_replace completing a token: %q", r.Text)
		}
		// The same by insert: a private key's header first, then nothing
		// else is needed; and a card number split over two lines is not one.
		if r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/b.md", "file_text": "-----BEGIN RSA PRIVATE"})); r.IsError {
			t.Fatal(r.Text)
		}
		r = mem.Run(ctx, js(map[string]any{"command": "str_replace", "path": "/memories/b.md", "old_str": "PRIVATE", "new_str": "PRIVATE KEY-----"}))
		if !r.IsError || !strings.Contains(r.Text, "a private key on line 1") {
			t.Errorf("str_replace completing a key header: %q", r.Text)
		}
		if got := storetest.Snapshot(t, inner); got["a.md"] != "file:token "+half+"END\n" || got["b.md"] != "file:-----BEGIN RSA PRIVATE" {
			t.Errorf("store changed: %q", got)
		}
	})
}

func TestRedact(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: secrets.Redact}), nil)
		ctx := context.Background()
		r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "db " + urlPass + "\nkey " + aws + " end\n" + rsaKey + "\nafter"}))
		if r.IsError {
			t.Fatal(r.Text)
		}
		want := "file:db postgres://app:[REDACTED password in a URL]@db.internal:5432/prod\nkey [REDACTED AWS access key ID] end\n[REDACTED private key]\nafter"
		if got := storetest.Snapshot(t, inner)["a.md"]; got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
		// Editing a redacted file keeps it as it is.
		if r := mem.Run(ctx, js(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "after", "new_str": "later " + stripe})); r.IsError {
			t.Fatal(r.Text)
		}
		want = strings.Replace(want, "after", "later [REDACTED Stripe key]", 1)
		if got := storetest.Snapshot(t, inner)["a.md"]; got != want {
			t.Errorf("after an edit: got %q\nwant %q", got, want)
		}
	})
}

// A URL's password is redacted whole, also when it holds ':', and the
// rest of the URL is kept: its scheme, user name and host.
func TestRedactURLPassword(t *testing.T) {
	mem := memtool.New(secrets.New(memstore.New(), &secrets.Options{Policy: secrets.Redact}), nil)
	ctx := context.Background()
	text := "see https://deploy:" + "pa:ss:w0rd@example.com/x and ftp://u:" + "p@h"
	r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": text}))
	if r.IsError {
		t.Fatal(r.Text)
	}
	r = mem.Run(ctx, js(map[string]any{"command": "view", "path": "/memories/a.md"}))
	want := "see https://deploy:[REDACTED password in a URL]@example.com/x and ftp://u:[REDACTED password in a URL]@h"
	if !strings.Contains(r.Text, want) || strings.Contains(r.Text, "w0rd") {
		t.Errorf("got %q\nwant it to hold %q", r.Text, want)
	}
}

// TestNames: a secret in a path is refused under either policy.
func TestNames(t *testing.T) {
	for _, p := range []secrets.Policy{secrets.Reject, secrets.Redact} {
		inner := memstore.New()
		mem := memtool.New(secrets.New(inner, &secrets.Options{Policy: p}), nil)
		ctx := context.Background()
		r := mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/" + github + "/a.md", "file_text": "x"}))
		if !r.IsError || !strings.Contains(r.Text, "holds what looks like a GitHub token") || strings.Contains(r.Text, github) {
			t.Errorf("policy %d, create: %q", p, r.Text)
		}
		mem.Run(ctx, js(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "x"}))
		r = mem.Run(ctx, js(map[string]any{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/" + aws}))
		if !r.IsError || !strings.Contains(r.Text, "an AWS access key ID") {
			t.Errorf("policy %d, rename: %q", p, r.Text)
		}
	}
}

func TestErrorType(t *testing.T) {
	s := secrets.New(memstore.New(), nil)
	err := s.WriteFile(context.Background(), "a", []byte(jwt), memtool.CreateOnly)
	var se *secrets.Error
	if !errors.As(err, &se) || len(se.Findings) != 1 || se.Findings[0].Kind != "a JSON Web Token" || strings.Contains(err.Error(), jwt[:20]) {
		t.Fatalf("got %#v", err)
	}
}

// TestBattery: the reference battery holds no secrets, so the answers are
// the same with and without the wrapper.
func TestBattery(t *testing.T) {
	battery.SameAnswers(t, battery.Inputs(t), secrets.New(memstore.New(), nil))
}

// ---- benchmarks ----

// notes4K is 4 KiB of typical memory text: prose, a few URLs, numbers,
// dates and code.
var notes4K = func() []byte {
	para := "## 2026-11-30 session 12\n- Fixed the login page (see https://example.com/issues/4411); tests: 231 passed.\n- User prefers tabs; deploy with `make deploy ENV=staging` at 04:30 UTC.\n- Order 1234-5678 shipped; ask about sk-style keys? No: use the vault.\n"
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString(para)
	}
	return []byte(b.String()[:4096])
}()

// BenchmarkScan4K: the scan of one 4 KiB file (target: under 50 µs).
func BenchmarkScan4K(b *testing.B) {
	b.SetBytes(int64(len(notes4K)))
	for b.Loop() {
		if secrets.Scan(notes4K) != nil {
			b.Fatal("false positive")
		}
	}
}

// BenchmarkEdit: a str_replace in a 4 KiB file through Memory on memstore,
// without and with the wrapper.
func BenchmarkEdit(b *testing.B) {
	storetest.BenchmarkEdit(b, func() memtool.Store { return memstore.New() }, notes4K, "secrets",
		func(_ *testing.B, s memtool.Store) memtool.Store { return secrets.New(s, nil) })
}

// FuzzScan checks what every result of Scan must satisfy: findings lie in
// the text, in order, without overlap, on the line they name, with a kind;
// and a known secret on lines of its own is still found, whatever the
// lines around it hold.
func FuzzScan(f *testing.F) {
	for i, c := range secretCases {
		f.Add("x "+c.token+"\n"+c.token, uint8(i))
	}
	for i, s := range nearMisses {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		checkFindings(t, text, secrets.Scan([]byte(text)))
		tok := secretCases[int(which)%len(secretCases)].token
		around := text + "\n" + tok + "\n" + text
		found := secrets.Scan([]byte(around))
		checkFindings(t, around, found)
		at := len(text) + 1
		for _, want := range secrets.Scan([]byte(tok)) {
			if !slices.ContainsFunc(found, func(fd secrets.Finding) bool {
				return fd.Start <= at+want.Start && at+want.End <= fd.End
			}) {
				t.Fatalf("%s (%q) is missed between the lines of %q: found %+v", want.Kind, tok[want.Start:want.End], text, found)
			}
		}
	})
}

// checkFindings checks the findings Scan gave for text.
func checkFindings(t *testing.T, text string, findings []secrets.Finding) {
	t.Helper()
	end := 0
	for _, fd := range findings {
		if fd.Start < end || fd.End <= fd.Start || fd.End > len(text) || fd.Kind == "" {
			t.Fatalf("bad finding %+v (previous end %d, len %d)", fd, end, len(text))
		}
		if want := strings.Count(text[:fd.Start], "\n") + 1; fd.Line != want {
			t.Fatalf("finding %+v: line %d, want %d", fd, fd.Line, want)
		}
		end = fd.End
	}
}

// The filter looks at what is written alone and passes reads through, so
// the wrapper keeps the directory store's ways of reading.
func TestReadForwarding(t *testing.T) {
	storetest.RunReadForwarding(t, backendtest.FileStore(t), func(s memtool.Store) memtool.Store {
		return secrets.New(s, &secrets.Options{Policy: secrets.Reject})
	})
}
