package memtool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// memory_search reads its input as strictly as the memory tool reads its
// own: a parameter given twice, or in a spelling that differs from its
// name only by case, is refused (encoding/json alone would take the last,
// or the other spelling), and nothing is searched.
func TestSearchToolStrictKeys(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if err := s.WriteFile(ctx, "a.md", []byte("alpha\nbeta\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	mem := memtool.New(s, nil)
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
