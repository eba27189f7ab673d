package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
)

// TestLogHidesSecretUncoveredByRedaction: a path holding a Stripe key as
// long as its rule matches, with a GitHub token glued to it (not found
// until the key is cut out, since it does not stand alone), or with a
// card number after a dash (taken for part of a longer number until the
// key's last digit is cut out): the log shows neither the token nor the
// card, and the path it shows holds no secret.
func TestLogHidesSecretUncoveredByRedaction(t *testing.T) {
	tok := "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
	card := "4111111111111111"
	stripeMax := "sk_live_" + strings.Repeat("a1B2c3D4e5", 10)[:99]
	var log bytes.Buffer
	mem := memtool.New(audit.New(secrets.New(memstore.New(), nil), &log, nil), nil)
	for _, p := range []string{stripeMax + tok + ".md", "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc9-" + card + ".md"} {
		mem.Run(context.Background(), []byte(`{"command":"view","path":"/memories/`+p+`"}`))
	}
	if strings.Contains(log.String(), tok[4:]) || strings.Contains(log.String(), card) {
		t.Errorf("the audit log holds a secret:\n%s", log.String())
	}
	for line := range strings.SplitSeq(strings.TrimSpace(log.String()), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if f := secrets.Scan([]byte(e.Path)); f != nil {
			t.Errorf("logged path %q holds %s", e.Path, f[0].Kind)
		}
	}
}
