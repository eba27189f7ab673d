package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
	"github.com/memtool/memtool/server/resource"
)

// TestOpenAPIDocumentsEveryRoute checks the served OpenAPI document
// against a server that mounts the resource API, as memtool serve does,
// both ways: its operations are exactly the server's own routes and the
// resource API's; each is served (answered by its handler, not the
// catch-all 404 or the mux's 405, with an admin key); any other method on
// a documented path is not served.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	var srv *server.Server
	f := newFixture(t, func(c *server.Config) {
		res := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
			mem, canWrite, err := srv.Memory(r)
			if err != nil {
				return nil, false, err
			}
			return mem.Store(), canWrite, nil
		}, nil)
		c.Mount = map[string]http.Handler{}
		for _, p := range resource.Patterns() {
			c.Mount[p] = res
		}
	})
	srv = f.server
	_, admin := f.key(t, "alice", keys.Admin)

	got := f.do(t, "GET", resource.OpenAPIPath, "", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(got.body), &doc); got.status != 200 || err != nil {
		t.Fatalf("GET %s: %d %v", resource.OpenAPIPath, got.status, err)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+p)
		}
	}
	slices.Sort(documented)
	routes := append(server.Patterns(), resource.Patterns()...)
	slices.Sort(routes)
	if !slices.Equal(documented, routes) {
		t.Errorf("documented operations:\n%s\nroutes:\n%s", strings.Join(documented, "\n"), strings.Join(routes, "\n"))
	}
	for p := range doc.Paths {
		for _, m := range []string{"GET", "PUT", "POST", "DELETE", "PATCH"} {
			got := f.do(t, m, p+"?path=/memories/none&q=x", admin, `{"command":"view","path":"/memories"}`)
			unserved := got.status == http.StatusMethodNotAllowed || strings.Contains(got.body, "no such route") ||
				strings.Contains(got.body, "404 page not found")
			_, isDoc := doc.Paths[p][strings.ToLower(m)]
			switch {
			case isDoc && unserved:
				t.Errorf("%s %s is documented but not served: %d %s", m, p, got.status, got.body)
			case !isDoc && !unserved:
				t.Errorf("%s %s is not documented but answers %d %s", m, p, got.status, got.body)
			}
		}
	}
}
