package remotestore_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
)

// A search through a remote store reads every file over the API (it has
// no index of its own); under the server's expiry policy those reads are
// not uses of the files, as a search on the server's store is not, while
// a read the model asks for is one.
func TestSearchReadsAreNoUse(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	inner := memstore.New()
	ex := expiry.New(inner, &expiry.Options{Now: func() time.Time { return now }})
	srv := httptest.NewServer(remotetest.Handler(ex, ""))
	t.Cleanup(srv.Close)
	rs, err := remotestore.Open(srv.URL, &remotestore.Options{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.WriteFile(ctx, "a.md", []byte("a quokka\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	index := func() string {
		data, err := inner.ReadFile(ctx, expiry.IndexName, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	written := index()
	now = now.Add(48 * time.Hour)
	r, err := memtool.Search(ctx, rs, memtool.SearchQuery{Query: "quokka"}, 0)
	if err != nil || len(r.Matches) != 1 {
		t.Fatalf("search: %+v, %v", r, err)
	}
	if got := index(); got != written {
		t.Errorf("the search recorded a use: the index went from\n%s\nto\n%s", written, got)
	}
	if _, err := rs.ReadFile(ctx, "a.md", 1<<20); err != nil {
		t.Fatal(err)
	}
	if index() == written {
		t.Errorf("a read the model asked for recorded no use")
	}
}
