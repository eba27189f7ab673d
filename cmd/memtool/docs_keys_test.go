package main

import (
	"strings"
	"testing"
)

// memtool keys -h says what --tenant means there: the tenant of the key
// that add makes, not a memory to use in a multi-tenant store.
func TestDocsKeysHelpSaysWhatTenantIs(t *testing.T) {
	t.Parallel()
	out, _, code := runCLI(t, nil, "", "keys", "-h")
	want := "the tenant whose memory the new key reaches (add)"
	if code != exitOK || !strings.Contains(out, want) || strings.Contains(out, "the tenant whose memory to use") {
		t.Errorf("memtool keys -h (exit %d) does not say %q of --tenant:\n%s", code, want, out)
	}
}
