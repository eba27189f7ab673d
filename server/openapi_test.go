package server_test

import (
	"encoding/json"
	"fmt"
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
	f := withResourceAPI(t)
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

// withResourceAPI is a server that mounts the resource API, as memtool
// serve does.
func withResourceAPI(t *testing.T) *fixture {
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
	return f
}

// TestOpenAPIUnauthorizedBodies: every operation's 401 without a token,
// resource API included, has the body its OpenAPI document describes.
func TestOpenAPIUnauthorizedBodies(t *testing.T) {
	f := withResourceAPI(t)
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]json.RawMessage }
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(resource.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for p, ops := range doc.Paths {
		for method, op := range ops {
			documented, ok := op.Responses["401"]
			if !ok {
				continue
			}
			var resp struct {
				Content map[string]struct{ Schema json.RawMessage }
			}
			if err := json.Unmarshal(documented, &resp); err != nil {
				t.Fatal(err)
			}
			got := f.do(t, strings.ToUpper(method), p+"?path=/memories/x&q=x", "", "{}")
			var body any
			if err := json.Unmarshal([]byte(got.body), &body); got.status != http.StatusUnauthorized || err != nil {
				t.Errorf("%s %s without a token: %d %s", method, p, got.status, got.body)
				continue
			}
			if err := conforms(body, resp.Content["application/json"].Schema, doc.Components.Schemas); err != nil {
				t.Errorf("%s %s: the 401 body %s is not what the document says: %v", method, p, got.body, err)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d operations document a 401", checked)
	}
}

// conforms checks v against the parts of a JSON schema the document's
// error schemas use: $ref, type (object or string), required, properties.
func conforms(v any, schema json.RawMessage, components map[string]json.RawMessage) error {
	var s struct {
		Ref        string `json:"$ref"`
		Type       string
		Required   []string
		Properties map[string]json.RawMessage
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return err
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		return conforms(v, components[name], components)
	}
	switch s.Type {
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%v is not a string", v)
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%v is not an object", v)
		}
		for _, k := range s.Required {
			if _, ok := m[k]; !ok {
				return fmt.Errorf("no %q in %v", k, m)
			}
		}
		for k, sub := range s.Properties {
			if x, ok := m[k]; ok {
				if err := conforms(x, sub, components); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
			}
		}
	}
	return nil
}
