package secretscan

import (
	"bytes"
	"strings"
	"testing"
)

// adversarial holds the units of texts built to make a scan slow: anchors
// packed as densely as they go, with and without what would confirm them
// (a private key's END line, an OpenAI key's marker, a JWT's second part).
var adversarial = map[string]string{
	"key headers without END":         "-----BEGIN PRIVATE KEY-----\n",
	"key headers on one line":         "-----BEGIN PRIVATE KEY-----",
	"BEGIN alone":                     "-----BEGIN",
	"BEGIN and labels":                "-----BEGIN " + strings.Repeat("PRIVATE KEY ", 8),
	"END without its dashes":          "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY",
	"whole keys":                      "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
	"key headers in header lines":     "X: -----BEGIN PRIVATE KEY-----\n",
	"key headers in Proc-Type lines":  "Proc-Type: -----BEGIN PRIVATE KEY-----\n",
	"key headers and bodies":          "-----BEGIN PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\n",
	"OpenAI prefixes":                 "sk-proj-",
	"OpenAI prefixes, marker at end":  strings.Repeat("sk-proj-", 60) + "T3BlbkFJ ",
	"old OpenAI prefixes":             "sk-",
	"Anthropic prefixes":              "sk-ant-api03-",
	"Slack tokens":                    "xoxb-1234567890-",
	"Slack rotating":                  "xoxe.",
	"URL user names":                  "://a:",
	"URL schemes":                     ":// ",
	"JWT headers":                     "-eyJAAAAAAAAAAAAAAAAAAAAAAAAA",
	"JWT headers glued":               "eyJ",
	"JWT headers and dots":            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.",
	"Slack webhooks":                  "hooks.slack.com/services/",
	"Slack webhooks glued":            "hooks.slack.com/services/" + strings.Repeat("T0", 10),
	"Slack rotating tokens glued":     "-xoxe.xoxp-1-" + strings.Repeat("Mi0y", 10),
	"AWS secret key names":            "aws_secret_access_key=",
	"AWS secret key names and blanks": "aws_secret_access_key" + strings.Repeat(" ", 100),
	"AWS key IDs":                     "AKIA",
	"GitLab prefixes":                 "glpat-",
	"card groups":                     "4111 ",
	"cards":                           "4111111111111111-",
	"digit groups":                    "1 ",
	"number groups":                   "1234 ",
	"numbers and groups":              "12 3456 ",
}

// keyEndLine ends each adversarial text: the one END line that every
// private key header before it would reach.
const keyEndLine = "\n-----END PRIVATE KEY-----\n"

// TestScanWorkIsLinear: the work a scan does besides its one pass over the
// text (the bytes it hands to regular expressions, and the runs and
// searches it walks; see scan) is at most a small constant per byte of the
// text, whatever the text holds. A scan that searched to the end of the
// text from each of many anchors (quadratic), or ran a regular expression
// on a 512-byte window at each of densely packed anchors, fails, without
// timing anything.
func TestScanWorkIsLinear(t *testing.T) {
	const perByte = 16
	for name, unit := range adversarial {
		for _, n := range []int{16 << 10, 128 << 10} {
			text := append(bytes.Repeat([]byte(unit), n/len(unit)+1), keyEndLine...)
			if _, work := scan(text); work > perByte*len(text) {
				t.Errorf("%s: %d bytes cost %d units of work (%.1f a byte), want at most %d a byte", name, len(text), work, float64(work)/float64(len(text)), perByte)
			}
		}
	}
}

// TestScanEveryPrefix: a scan of any prefix of the adversarial texts, and
// of texts that end inside a secret's anchor or just after it (where a
// search for what would confirm it starts past the end), does not fail.
func TestScanEveryPrefix(t *testing.T) {
	units := []string{"x sk-proj-abc", "sk-svcacct-" + strings.Repeat("a", 25) + "T3BlbkFJ", "eyJ" + strings.Repeat("a", 20) + ".eyJ",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "aws_secret_access_key = \"", "postgres://u:p@h"}
	for _, unit := range adversarial {
		units = append(units, strings.Repeat(unit, 3))
	}
	for _, text := range units {
		for i := range len(text) + 1 {
			Scan([]byte(text[:i]))
		}
	}
}

// BenchmarkScanAdversarial: a scan of 1 MiB of each adversarial text.
//
//	go test -run '^$' -bench ScanAdversarial ./internal/secretscan
func BenchmarkScanAdversarial(b *testing.B) {
	for name, unit := range adversarial {
		text := append(bytes.Repeat([]byte(unit), (1<<20)/len(unit)+1)[:1<<20-len(keyEndLine)], keyEndLine...)
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Scan(text)
			}
		})
	}
}
