package audit_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/storetest"
)

// TestEditRefusedByPolicyOutside: with audit inside the secrets and
// limits policies, an edit that one of them refuses reaches audit's
// Update, the policy's check running in the edit function. It is logged
// as "refused", as audit outside them logs it, not as "edit_failed",
// which is for the edit itself failing (old_str not found), so that an
// operator looking for refusals finds them.
func TestEditRefusedByPolicyOutside(t *testing.T) {
	var log syncbuf.Buffer
	var store memtool.Store = audit.New(memstore.New(), &log, nil)
	store = limits.New(store, &limits.Options{MaxFileSize: 100})
	store = secrets.New(store, nil)
	mem := memtool.New(store, nil)
	token := "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
	for _, in := range []map[string]any{
		{"command": "create", "path": "/memories/a.md", "file_text": "TOKEN\n"},
		{"command": "str_replace", "path": "/memories/a.md", "old_str": "TOKEN", "new_str": token},
		{"command": "str_replace", "path": "/memories/a.md", "old_str": "TOKEN", "new_str": strings.Repeat("x", 200)},
		{"command": "str_replace", "path": "/memories/a.md", "old_str": "absent", "new_str": "y"},
	} {
		storetest.Call(t, mem, in)
	}
	var got []string
	for _, e := range entries(t, log.String()) {
		if e.Op == "update" {
			got = append(got, e.Outcome)
		}
	}
	if want := "refused refused edit_failed"; strings.Join(got, " ") != want {
		t.Errorf("update outcomes %q, want %q\n%s", got, want, log.String())
	}
}
