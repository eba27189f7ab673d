package remotestore_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
)

// FuzzListing answers a directory's listing and a stat with arbitrary
// bytes: ReadDir and Stat either fail or give entries the API could give:
// one base name each, listed once per type, with a size of at least 0.
func FuzzListing(f *testing.F) {
	for _, v := range []any{
		resource.Listing{Path: "/memories/d", Entries: []resource.Entry{{Name: "a.md", Type: "file", Size: 3}, {Name: "sub", Type: "dir"}}},
		resource.Listing{Path: "/memories/d", Entries: []resource.Entry{{Name: "..", Type: "dir"}, {Name: "a", Type: "irregular", Size: -1}}},
		resource.Entry{Path: "/memories/d", Type: "dir"},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"path":"/memories/d","entries":[{"name":"a","type":"file","size":"3"}]}`))
	f.Add([]byte(`{"path":"/memories/d","entries":null,"path":"/memories/e"}`))
	var mu sync.Mutex
	var answer []byte
	s := open(f, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}), nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		mu.Lock()
		answer = data
		mu.Unlock()
		if fi, err := s.Stat(t.Context(), "d"); err == nil && (fi.Name != "d" || fi.Size < 0) {
			t.Fatalf("Stat(d) of %q = %+v", data, fi)
		}
		entries, err := s.ReadDir(t.Context(), "d")
		if err != nil {
			return
		}
		seen := map[memtool.FileInfo]bool{}
		for _, e := range entries {
			key := memtool.FileInfo{Name: e.Name, Type: e.Type}
			if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") || e.Size < 0 || seen[key] {
				t.Fatalf("ReadDir(d) of %q gave %+v", data, e)
			}
			seen[key] = true
		}
	})
}
