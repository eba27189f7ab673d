package remotestore_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/memtool/memtool/server/resource"
)

// TestHostileEntries: entries the API never gives are a malformed answer,
// never taken for what is there: a size below zero (a file's size shown
// to the model, a quota's sum), and a name listed twice in one directory
// with one type (a walk or a copy would visit it twice, a view would
// show it twice). A file and a directory of one name are two entries, as
// an object store may hold them.
func TestHostileEntries(t *testing.T) {
	serve := func(v any) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(v)
		})
	}
	size := int64(-5)
	for what, entries := range map[string][]resource.Entry{
		"a size below zero": {{Name: "a.md", Type: "file", Size: size}},
		"a name twice":      {{Name: "a.md", Type: "file"}, {Name: "a.md", Type: "file"}},
		"a dir twice":       {{Name: "a", Type: "dir"}, {Name: "b", Type: "file"}, {Name: "a", Type: "dir"}},
	} {
		s := open(t, serve(resource.Listing{Path: "/memories/d", Entries: entries}), nil)
		if got, err := s.ReadDir(t.Context(), "d"); err == nil {
			t.Errorf("%s: ReadDir = %+v, nil", what, got)
		}
	}
	both := open(t, serve(resource.Listing{Path: "/memories/d", Entries: []resource.Entry{{Name: "a", Type: "dir"}, {Name: "a", Type: "file"}}}), nil)
	if got, err := both.ReadDir(t.Context(), "d"); err != nil || len(got) != 2 {
		t.Errorf("a file and a directory of one name: ReadDir = %+v, %v; want both", got, err)
	}
	s := open(t, serve(resource.Entry{Path: "/memories/a.md", Type: "file", Size: size}), nil)
	if fi, err := s.Stat(t.Context(), "a.md"); err == nil {
		t.Errorf("a size below zero: Stat = %+v, nil", fi)
	}
}
