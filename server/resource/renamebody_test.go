package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

// TestRenameBodyIsStrict: a rename's body that names from or to twice,
// or in another case, is refused and moves nothing: encoding/json would
// take the last of two keys and match keys without case, so the move
// would follow a reading of the body that another reader of it need not
// share.
func TestRenameBodyIsStrict(t *testing.T) {
	s, srv := newServer(t, true)
	if err := s.WriteFile(t.Context(), "a.md", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{
		`{"from":"/memories/b.md","from":"/memories/a.md","to":"/memories/c.md"}`,
		`{"from":"/memories/a.md","to":"/memories/c.md","to":"/memories/d.md"}`,
		`{"From":"/memories/a.md","to":"/memories/c.md"}`,
		`{"from":"/memories/a.md","TO":"/memories/c.md"}`,
		`{"from":"/memories/a.md"}`,
		`{"to":"/memories/c.md"}`,
		`{"from":"/memories/a.md","to":null}`,
		`{"from":"/memories/a.md","to":"/memories/c.md"} {}`,
	} {
		wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(b)), http.StatusBadRequest, "bad_request")
		entries, _ := s.ReadDir(t.Context(), "")
		if len(entries) != 1 || entries[0].Name != "a.md" {
			t.Fatalf("%s: the store holds %v", b, entries)
		}
	}
	wantStatus(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(` {"to":"/memories/c.md", "from":"/memories/a.md"}`+"\n")), http.StatusNoContent)
	if storetest.ReadText(t, s, "c.md") != "a" {
		t.Fatal("the rename lost the content")
	}
}
