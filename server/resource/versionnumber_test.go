package resource_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// TestVersionNumberIsExact: a version number past the largest the
// handler once took (2³¹-1) names no version: it is not read as that
// largest one, which a file whose counter went that far keeps, nor is a
// revert to it made.
func TestVersionNumberIsExact(t *testing.T) {
	inner := memstore.New()
	srv := serveStore(t, history.New(inner, nil), true, nil)
	const file = "/memories/f.md"
	wantStatus(t, put(t, srv, file, "one", nil), http.StatusOK)
	wantStatus(t, put(t, srv, file, "two", nil), http.StatusOK) // version 1: "one"
	sum := sha256.Sum256([]byte("f.md"))
	counter := path.Join(history.DirName, hex.EncodeToString(sum[:16]), "counter")
	if err := inner.WriteFile(t.Context(), counter, []byte("2147483646"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, put(t, srv, file, "three", nil), http.StatusOK) // version 2147483647: "two"
	if got := string(wantStatus(t, mustDo(t, srv, "GET", "/v1/version"+p(file, "n", "2147483647"), nil, nil), http.StatusOK)); got != "two" {
		t.Fatalf("version 2147483647 = %q", got)
	}
	for _, n := range []string{"2147483648", "4294967296", "9223372036854775807"} {
		resp := mustDo(t, srv, "GET", "/v1/version"+p(file, "n", n), nil, nil)
		if resp.StatusCode == http.StatusOK {
			t.Errorf("version %s = %q, a version that was never kept", n, body(t, resp))
		} else {
			wantError(t, resp, http.StatusNotFound, "not_found")
		}
		wantError(t, mustDo(t, srv, "POST", "/v1/revert"+p(file, "n", n), nil, nil), http.StatusNotFound, "not_found")
		if got := storetest.ReadText(t, inner, "f.md"); got != "three" {
			t.Fatalf("revert to version %s: the file holds %q", n, got)
		}
	}
	wantError(t, mustDo(t, srv, "GET", "/v1/version"+p(file, "n", "9223372036854775808"), nil, nil), http.StatusBadRequest, "bad_request")
}
