package resource_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

// TestCompareAndSwapRace: writers that all hold one ETag race, through
// two handlers over one database each with its own store, to replace a
// file with If-Match, and to create another with If-None-Match: *.
// Exactly one of each wins (200, 201); every other is 412, and the file
// holds the winner's body.
func TestCompareAndSwapRace(t *testing.T) {
	type opened struct{ a, b memtool.Store }
	for _, c := range []struct {
		name string
		open func(t *testing.T) opened
	}{
		{"sqlite", func(t *testing.T) opened {
			path := filepath.Join(t.TempDir(), "m.db")
			a, err := sqlitestore.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			b, err := sqlitestore.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return opened{a, b}
		}},
		{"postgres", func(t *testing.T) opened {
			url := pgtest.URL(t)
			a, err := pgstore.Open(t.Context(), url, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			b, err := pgstore.Open(t.Context(), url, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return opened{a, b}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := c.open(t)
			srvs := []*httptest.Server{serveStore(t, st.a, true, nil), serveStore(t, st.b, true, nil)}
			if err := st.a.WriteFile(t.Context(), "f.md", []byte("start"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			etag := resource.ETag([]byte("start"))
			const writers = 16
			var wg sync.WaitGroup
			statuses := make([]int, writers)
			created := make([]int, writers)
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					srv := srvs[i%2]
					resp := mustDo(t, srv, "PUT", "/v1/file"+p("/memories/f.md"), http.Header{"If-Match": {etag}}, []byte(fmt.Sprint("writer ", i)))
					body(t, resp)
					statuses[i] = resp.StatusCode
					resp = mustDo(t, srv, "PUT", "/v1/file"+p("/memories/new.md"), http.Header{"If-None-Match": {"*"}}, []byte(fmt.Sprint("creator ", i)))
					body(t, resp)
					created[i] = resp.StatusCode
				}()
			}
			wg.Wait()
			check := func(what, name string, got []int, okStatus int, prefix string) {
				winner := -1
				for i, s := range got {
					switch {
					case s == okStatus && winner < 0:
						winner = i
					case s == okStatus:
						t.Errorf("%s: writers %d and %d both won", what, winner, i)
					case s != http.StatusPreconditionFailed:
						t.Errorf("%s: writer %d got %d", what, i, s)
					}
				}
				if winner < 0 {
					t.Fatalf("%s: nobody won: %v", what, got)
				}
				if got := storetest.ReadText(t, st.b, name); got != fmt.Sprint(prefix, winner) {
					t.Errorf("%s: the file holds %q, the winner was %d", what, got, winner)
				}
			}
			check("If-Match", "f.md", statuses, http.StatusOK, "writer ")
			check("If-None-Match", "new.md", created, http.StatusCreated, "creator ")
		})
	}
}
