package resource_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/memtool/memtool/server/resource"
)

// TestOpenAPIValid: the served document is a valid OpenAPI 3 document.
func TestOpenAPIValid(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(resource.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestOpenAPIMatchesRoutes checks the document's paths and methods against
// the routes the handler serves, both ways: every operation of the
// document on the handler's paths is served (answered by a route, not the
// mux's 404 or 405), every route of the handler is in the document, and
// every other method on such a path is 405. The document's other paths
// are the server's own routes (POST /v1/memory, …), checked against the
// server in package server (TestOpenAPIDocumentsEveryRoute).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	_, srv := newServer(t, true)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	resp := mustDo(t, srv, "GET", resource.OpenAPIPath, nil, nil)
	if err := json.Unmarshal(body(t, resp), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	served := resource.Patterns()
	slices.Sort(served)
	mine := map[string]bool{}
	for _, p := range served {
		mine[p[strings.Index(p, " ")+1:]] = true
	}
	var documented []string
	for p, ops := range doc.Paths {
		if !mine[p] {
			delete(doc.Paths, p)
			continue
		}
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+p)
		}
	}
	slices.Sort(documented)
	if !slices.Equal(documented, served) {
		t.Errorf("documented operations:\n%s\nroutes:\n%s", strings.Join(documented, "\n"), strings.Join(served, "\n"))
	}
	allMethods := []string{"GET", "PUT", "POST", "DELETE", "PATCH"}
	for p := range doc.Paths {
		for _, m := range allMethods {
			resp := mustDo(t, srv, m, p+"?path=/memories/none", nil, nil)
			b := string(body(t, resp))
			_, isDoc := doc.Paths[p][strings.ToLower(m)]
			switch {
			case isDoc && (resp.StatusCode == http.StatusMethodNotAllowed || strings.Contains(b, "404 page not found")):
				t.Errorf("%s %s is documented but not served: %d %s", m, p, resp.StatusCode, b)
			case !isDoc && resp.StatusCode != http.StatusMethodNotAllowed:
				t.Errorf("%s %s is not documented but answers %d %s", m, p, resp.StatusCode, b)
			}
		}
	}
}

func body(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustDo(t *testing.T, srv *httptest.Server, method, target string, header http.Header, data []byte) *http.Response {
	t.Helper()
	var r io.Reader
	if data != nil {
		r = strings.NewReader(string(data))
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+target, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
