package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// The body of a 405 names the method that was refused and the ones the
// route serves, so that "GET /v1/memory" does not read as if POST were
// the method refused.
func TestWrongMethodSaysWhichIsServed(t *testing.T) {
	f := withResourceAPI(t)
	got := f.do(t, "GET", "/v1/memory", "", "")
	want := `{"error":"GET is not served here; this route takes POST"}`
	if got.status != http.StatusMethodNotAllowed || strings.TrimSpace(got.body) != want {
		t.Errorf("GET /v1/memory: %d %s; want 405 %s", got.status, got.body, want)
	}
}
