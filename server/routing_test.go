package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// A route asked with a method it does not serve is 405 with Allow; a path
// that is no route is 404.
func TestWrongMethodIs405(t *testing.T) {
	f := withResourceAPI(t)
	got := f.do(t, "GET", "/v1/memory", "", "")
	if got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/memory: %d, Allow %q, %s; want 405, Allow POST", got.status, got.header.Get("Allow"), got.body)
	}
	got = f.do(t, "DELETE", "/healthz", "", "")
	if got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE /healthz: %d, Allow %q; want 405, Allow GET, HEAD", got.status, got.header.Get("Allow"))
	}
	if got := f.do(t, "GET", "/v1/nothing", "", ""); got.status != http.StatusNotFound || !strings.Contains(got.body, "no such route") {
		t.Errorf("GET /v1/nothing: %d %s", got.status, got.body)
	}
}
