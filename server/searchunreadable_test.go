package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// A search over an encrypted store in which one file does not open (sealed
// under another key) answers the other files' matches and names the file
// it passed over, so that an API client is not told the whole memory was
// searched.
func TestSearchNamesUnreadableFiles(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	mine, _ := encrypt.NewKey("mine")
	theirs, _ := encrypt.NewKey("theirs")
	store, err := encrypt.New(inner, []encrypt.Key{mine}, nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := encrypt.New(inner, []encrypt.Key{theirs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteFile(ctx, "notes.md", []byte("the word\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := foreign.WriteFile(ctx, "sealed.md", []byte("the word too\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *server.Config) {
		c.Open = func(context.Context, string) (memtool.Store, error) { return store, nil }
	})
	_, alice := f.key(t, "alice", keys.Read)
	r := f.do(t, "GET", "/v1/search?q=word", alice, "")
	var got struct {
		Matches []struct {
			Path string `json:"path"`
		} `json:"matches"`
		Total           int      `json:"total"`
		Unreadable      *int     `json:"unreadable"`
		UnreadablePaths []string `json:"unreadable_paths"`
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &got) != nil {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	if len(got.Matches) != 1 || got.Matches[0].Path != "/memories/notes.md" || got.Total != 1 ||
		got.Unreadable == nil || *got.Unreadable != 1 || len(got.UnreadablePaths) != 1 || got.UnreadablePaths[0] != "/memories/sealed.md" {
		t.Errorf("search with one file that does not open: %s", r.body)
	}
}
