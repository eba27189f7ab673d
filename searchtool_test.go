package memtool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
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
// with the type it must have, in words, not Go's; an input with anything
// after its object is refused, as the memory tool refuses one.
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
		`{"query":"alpha"} {"query":"b"}`: "the input must be a single JSON object, with nothing after it",
		`{"query":"alpha"}garbage`:        "the input must be a single JSON object, with nothing after it",
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

// A search whose deadline passes while it matches one long line stops
// there and says it did not finish in time: a costly regular expression
// (here one of 90,000 steps per character) on a line of 300,000
// characters would otherwise run on for most of an hour past its
// deadline, its answer long given up on. The search is given a minute to
// return after its deadline; it takes milliseconds.
func TestSearchToolDeadlineInLongLine(t *testing.T) {
	store, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mem := memtool.New(store, nil)
	long := strings.Repeat("a", 300_000) + "!"
	if r := mem.Execute(context.Background(), &memtool.Create{Path: "/memories/long.md", FileText: long}); r.IsError {
		t.Fatal(r.Text)
	}
	// A long line is still matched as a whole, when there is time.
	for _, q := range []string{`a{5}!$`, `^a+!`, `(?i)A!`} {
		res, err := mem.Search(context.Background(), memtool.SearchQuery{Query: q, Regex: true})
		if err != nil || res.Total != 1 {
			t.Errorf("search for %s in the long line: %d matches, %v", q, res.Total, err)
		}
	}
	query := strings.Repeat("[a-z]{1000}", 90)
	input, _ := json.Marshal(map[string]any{"query": query, "regex": true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan memtool.Result, 1)
	go func() { done <- mem.SearchTool(ctx, input) }()
	<-ctx.Done()
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.Text, "did not finish in time") {
			t.Errorf("a search past its deadline answered %.300q", r.Text)
		}
	case <-time.After(time.Minute):
		t.Fatal("the search still matches a line a minute after its deadline")
	}
}
