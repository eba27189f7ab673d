package storeurl_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/storeurl"
)

// TestPasswordWithURLSyntaxMasked: a password written into a store URL
// without escaping the characters that end a URL's authority ('/', '?',
// '#', or a space) is masked too: in the URL itself, as memtool info and
// the messages that name a store show it, and in Open's error, which
// quotes it. Redact once masked only a password free of them, and
// showed the others whole.
func TestPasswordWithURLSyntaxMasked(t *testing.T) {
	for _, pw := range []string{"Se/cret99", "Se?cret99", "Se#cret99", "Se/cr@et99", "a/b?c#Secret99"} {
		for _, u := range []string{
			"postgres://bob:" + pw + "@127.0.0.1:1/db?connect_timeout=2",
			"sqlite://bob:" + pw + "@/x.db",
			"s3://bucket?endpoint=http://AKIA:" + pw + "@127.0.0.1:1&region=us-east-1",
		} {
			if got := storeurl.Redact(u); strings.Contains(got, "cret99") || strings.Contains(got, "et99") {
				t.Errorf("Redact(%q) = %q", u, got)
			}
			if got := storeurl.Redact("store "+u+": failed", u); strings.Contains(got, "et99") {
				t.Errorf("Redact of a message quoting %q = %q", u, got)
			}
		}
		u := "sqlite://bob:" + pw + "@/x.db"
		if _, _, err := storeurl.Open(t.Context(), u, nil); err == nil || strings.Contains(err.Error(), "et99") {
			t.Errorf("Open(%q): %v", u, err)
		}
	}
	// A password with a space, which no URL parser takes, is masked in
	// messages about its own URL.
	u := "postgres://bob:Se cret99@127.0.0.1:1/db"
	if got := storeurl.Redact("store "+u+" refused", u); strings.Contains(got, "cret99") {
		t.Errorf("Redact of a message quoting %q = %q", u, got)
	}
	// What is not a password stays: a port and a path, an address.
	for _, s := range []string{"http://h:80/p@x", "postgres://u@h/db?x=a@b", "see https://h/a:b@c"} {
		if got := storeurl.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}
