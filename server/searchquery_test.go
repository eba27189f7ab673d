package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
)

// A search's query parameters are each given at most once and well
// formed: one given twice, or a pair that does not decode, is 400, not
// searched with the first value or without the pair (which, for path,
// would search the whole memory instead of the directory asked for).
func TestSearchQueryIsStrict(t *testing.T) {
	f := newFixture(t, nil)
	_, alice := f.key(t, "alice", keys.Write)
	for _, c := range []string{
		fmt.Sprintf(create, "alice"),
		`{"command":"create","path":"/memories/private/key.md","file_text":"SECRET key\n"}`,
	} {
		if r := f.do(t, "POST", "/v1/memory", alice, c); strings.Contains(r.body, `"is_error":true`) {
			t.Fatalf("%s: %s", c, r.body)
		}
	}
	if r := f.do(t, "GET", "/v1/search?q=SECRET&path=/memories/notes.md", alice, ""); r.status != 200 || strings.Contains(r.body, "key.md") || !strings.Contains(r.body, "notes.md") {
		t.Fatalf("a search of one file: %+v", r)
	}
	for _, query := range []string{
		"q=SECRET&path=/memories/notes.md&path=/memories/private",
		"q=SECRET&q=other",
		"q=SECRET&limit=1&limit=5",
		"q=SECRET&regex=false&regex=true",
		"q=SECRET&path=%zz",
		"q=SECRET;path=/memories/notes.md",
	} {
		r := f.do(t, "GET", "/v1/search?"+query, alice, "")
		if r.status != 400 {
			t.Errorf("search?%s: %d %s, want 400", query, r.status, r.body)
		}
	}
}
