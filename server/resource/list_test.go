package resource_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
)

// listAll follows GET /v1/files page by page, limit files a page, and
// returns the paths and hashes in the order given; between pages it
// calls between (if set) with the page number.
func listAll(t *testing.T, srv *httptest.Server, prefix string, limit int, between func(page int)) []resource.Entry {
	t.Helper()
	var all []resource.Entry
	cursor := ""
	for page := 0; ; page++ {
		target := "/v1/files?limit=" + strconv.Itoa(limit)
		if prefix != "" {
			target += "&prefix=" + prefix
		}
		if cursor != "" {
			target += "&page=" + cursor
		}
		var pg resource.Page
		if err := json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", target, nil, nil), http.StatusOK), &pg); err != nil {
			t.Fatal(err)
		}
		if len(pg.Data) > limit {
			t.Fatalf("a page of %d files, limit %d", len(pg.Data), limit)
		}
		all = append(all, pg.Data...)
		if pg.NextPage == "" {
			return all
		}
		if page > 1000 {
			t.Fatal("no last page")
		}
		cursor = pg.NextPage
		if between != nil {
			between(page)
		}
	}
}

func paths(entries []resource.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}

// The tree of the listing tests: names whose byte order differs from a
// walk that sorts each directory by name alone ("a" before "a.txt", but
// "/memories/a.txt" before "/memories/a/…").
var listTree = []string{"a/", "a/b", "a/c/", "a/c/d", "a.txt", "a0", "b/", "b/x", "empty/", "z"}

func makeListTree(t *testing.T, s memtool.Store) []string {
	t.Helper()
	var files []string
	for _, n := range listTree {
		if n[len(n)-1] == '/' {
			s.Mkdir(t.Context(), n[:len(n)-1])
			continue
		}
		s.WriteFile(t.Context(), n, []byte("content of "+n), memtool.CreateOnly)
		files = append(files, memtool.VirtualPath(n))
	}
	slices.Sort(files)
	return files
}

// TestListFiles: every page size gives every file once, in byte order of
// the paths, each with its size and SHA-256.
func TestListFiles(t *testing.T) {
	s, srv := newServer(t, true)
	want := makeListTree(t, s)
	for limit := 1; limit <= len(want)+1; limit++ {
		got := listAll(t, srv, "", limit, nil)
		if !slices.Equal(paths(got), want) {
			t.Fatalf("limit %d: %v, want %v", limit, paths(got), want)
		}
		for _, e := range got {
			data := []byte("content of " + e.Path[len(memtool.Root)+1:])
			if e.Type != "file" || e.Size != int64(len(data)) || `"`+e.SHA256+`"` != resource.ETag(data) {
				t.Fatalf("%+v", e)
			}
		}
	}
	if got := paths(listAll(t, srv, "/memories/a", 2, nil)); !slices.Equal(got, []string{"/memories/a/b", "/memories/a/c/d"}) {
		t.Errorf("prefix /memories/a: %v", got)
	}
	wantError(t, mustDo(t, srv, "GET", "/v1/files?prefix=/memories/a.txt", nil, nil), 409, "not_dir")
	wantError(t, mustDo(t, srv, "GET", "/v1/files?prefix=/memories/nothing", nil, nil), 404, "not_found")
	wantError(t, mustDo(t, srv, "GET", "/v1/files?prefix=/etc", nil, nil), 400, "bad_path")
	wantError(t, mustDo(t, srv, "GET", "/v1/files?page=***", nil, nil), 400, "bad_request")
}

// TestListFilesWhileChanging: files removed and added between pages do not
// make a file that stays appear twice or go missing.
func TestListFilesWhileChanging(t *testing.T) {
	s, srv := newServer(t, true)
	want := makeListTree(t, s)
	got := listAll(t, srv, "", 2, func(page int) {
		// Remove the first file (already listed), add one before the
		// cursor and one after everything.
		if page == 0 {
			s.Remove(t.Context(), "a/b")
			s.WriteFile(t.Context(), "0early", nil, memtool.CreateOnly)
			s.WriteFile(t.Context(), "zz", nil, memtool.CreateOnly)
		}
	})
	want = append(want, "/memories/zz")
	if !slices.Equal(paths(got), want) {
		t.Fatalf("got %v, want %v", paths(got), want)
	}
}

// TestListFilesLimits: a page never holds more than MaxPageSize files,
// whatever limit asks, and a file larger than the server reads is listed
// with its size and no hash.
func TestListFilesLimits(t *testing.T) {
	s := newStoreWith(t, map[string]string{"a": "small", "b": "much larger than five", "c": "c"})
	srv := serveStore(t, s, true, &resource.Options{MaxPageSize: 2, MaxFileBytes: 5})
	var pg resource.Page
	json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", "/v1/files?limit=5000", nil, nil), http.StatusOK), &pg)
	if len(pg.Data) != 2 || pg.NextPage == "" {
		t.Fatalf("limit 5000 over MaxPageSize 2: %+v", pg)
	}
	if b := pg.Data[1]; b.Path != "/memories/b" || b.Size != 21 || b.SHA256 != "" {
		t.Errorf("a file over MaxFileBytes: %+v", b)
	}
}

func newStoreWith(t *testing.T, files map[string]string) memtool.Store {
	s, _ := newServer(t, true)
	for name, data := range files {
		if err := s.WriteFile(t.Context(), name, []byte(data), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
