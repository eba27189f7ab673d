package remotestore_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
)

// TestListingOfGatedNames: a listing that names an entry the path gate
// refuses (a line break that would forge lines of the model's view, a
// bidi control, a name the storage layer keeps) is not the API's: the
// server leaves such names out. They are not passed on: every request
// about one is refused anyway, and the model's view would show it raw.
func TestListingOfGatedNames(t *testing.T) {
	forged := "a.md\n4K\t\u2003forged.md"
	s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/entry" {
			w.Write([]byte(`{"path":"/memories","type":"dir","size":0}`))
			return
		}
		l := resource.Listing{Path: "/memories", Entries: []resource.Entry{
			{Name: "f.md", Type: "file", Size: 7},
			{Name: forged, Type: "file", Size: 1},
			{Name: "b\u202etxt.md", Type: "file", Size: 1},
			{Name: ".memtool-history", Type: "dir"},
		}}
		json.NewEncoder(w).Encode(l)
	}), nil)
	entries, err := s.ReadDir(t.Context(), "")
	for _, e := range entries {
		if _, _, gerr := memtool.CleanPath("/memories/" + e.Name); gerr != nil {
			t.Errorf("ReadDir = %v, %v: %q is a name the path gate refuses", entries, err, e.Name)
		}
	}
	res := memtool.New(s, nil).Execute(t.Context(), &memtool.View{Path: "/memories"})
	if strings.Contains(res.Text, "forged.md") {
		t.Errorf("the view shows a forged line:\n%s", res.Text)
	}
}
