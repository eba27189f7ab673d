package memtool_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// memory_search reads its input as strictly as the memory tool reads its
// own: a parameter given twice, or in a spelling that differs from its
// name only by case, is refused (encoding/json alone would take the last,
// or the other spelling), and nothing is searched.
func TestSearchToolStrictKeys(t *testing.T) {
	ctx := context.Background()
	mem := newMemWith(t, nil, "alpha\nbeta\n")
	for in, want := range map[string]string{
		`{"query":"alpha","query":"beta"}`: "duplicate parameter 'query'",
		`{"QUERY":"alpha"}`:                "unknown parameter 'QUERY' (did you mean 'query'?)",
		`{"query":"alpha","Limit":1}`:      "unknown parameter 'Limit' (did you mean 'limit'?)",
	} {
		r := mem.SearchTool(ctx, []byte(in))
		if !r.IsError || !strings.Contains(r.Text, "invalid memory_search input: "+want) {
			t.Errorf("%s: %q, want an error saying %q", in, r.Text, want)
		}
	}
	if r := mem.SearchTool(ctx, []byte(`{"query":"beta","limit":5}`)); r.IsError || !strings.Contains(r.Text, "a.md:2:beta") {
		t.Errorf("a plain search: %q", r.Text)
	}
}

// memory_search takes a limit written as any whole JSON number, as the
// memory tool takes insert_line, and names a member of the wrong type
// with the type it must have, in words, not Go's.
func TestSearchToolTypes(t *testing.T) {
	ctx := context.Background()
	mem := newMemWith(t, nil, "alpha\nalpha two\n")
	for _, limit := range []string{"1", "1.0", "1e0", "null"} {
		r := mem.SearchTool(ctx, []byte(`{"query":"alpha","limit":`+limit+`}`))
		if r.IsError || !strings.Contains(r.Text, "a.md:1:alpha") {
			t.Errorf("limit %s: %q", limit, r.Text)
		}
	}
	for in, want := range map[string]string{
		`{"query":"alpha","limit":1.5}`:   "limit must be a whole number, not 1.5",
		`{"query":"alpha","limit":"2"}`:   "limit must be a whole number, not string",
		`{"query":"alpha","limit":-1}`:    "limit -1 is less than 1",
		`{"query":7}`:                     "query must be a string, not number",
		`{"query":"alpha","regex":"yes"}`: "regex must be true or false, not string",
		`{"query":"alpha","path":["/m"]}`: "path must be a string, not array",
	} {
		r := mem.SearchTool(ctx, []byte(in))
		if !r.IsError || r.Text != "Error: invalid memory_search input: "+want {
			t.Errorf("%s: %q, want %q", in, r.Text, want)
		}
	}
	// A search whose time is up says so (not that the store did not answer).
	late, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if r := mem.SearchTool(late, []byte(`{"query":"alpha"}`)); !r.IsError || !strings.Contains(r.Text, "did not finish in time") {
		t.Errorf("a search past its deadline: %q", r.Text)
	}
}
