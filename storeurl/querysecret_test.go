package storeurl_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/storeurl"
)

// TestQuerySecretMaskedWhole: a credential in a store URL's query runs to
// the next '&' (pgx reads ?password=abc;defghi as the password
// "abc;defghi"), so all of it is masked, also where it holds a ';' or a
// quote, which end a value in a key=value connection string, or a '#':
// in the URL
// itself, as the messages that name a store show it, and in Open's
// error. Redact once masked the part before the ';' or quote alone. In a
// connection string, a ';' still ends the value.
func TestQuerySecretMaskedWhole(t *testing.T) {
	for _, pw := range []string{"abc;defghi", "ab'cdefghi", "x;y'defghi", "ab#cdefghi"} {
		for _, u := range []string{
			"postgres://bob@127.0.0.1:1/db?connect_timeout=2&password=" + pw,
			"postgres://bob@127.0.0.1:1/db?password=" + pw + "&connect_timeout=2",
			"s3://bucket?region=us-east-1&secret_access_key=" + pw,
		} {
			if got := storeurl.Redact(u); strings.Contains(got, "defghi") {
				t.Errorf("Redact(%q) = %q", u, got)
			}
			if got := storeurl.Redact("store "+u+": failed", u); strings.Contains(got, "defghi") {
				t.Errorf("Redact of a message quoting %q = %q", u, got)
			}
			if strings.HasPrefix(u, "postgres:") {
				if _, _, err := storeurl.Open(t.Context(), u, nil); err == nil || strings.Contains(err.Error(), "defghi") {
					t.Errorf("Open(%q): %v", u, err)
				}
			}
		}
	}
	for s, want := range map[string]string{
		"Server=h;Password=abcdefgh;Database=d":             "Server=h;Password=" + storeurl.Masked + ";Database=d",
		"postgres://h/db?password=abcdefgh&sslmode=disable": "postgres://h/db?password=" + storeurl.Masked + "&sslmode=disable",
	} {
		if got := storeurl.Redact(s); got != want {
			t.Errorf("Redact(%q) = %q, want %q", s, got, want)
		}
	}
}
