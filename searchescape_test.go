package memtool_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// A search whose path leads out of the store through a symbolic link is
// a path refused, as view refuses it: memory_search told the model the
// store did not answer and to try again (which could never succeed), and
// logged a store failure; Search returned the store's error, not a
// *SearchError.
func TestSearchPathThroughLinkOut(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "secret.md"), []byte("zebra secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for link, target := range map[string]string{"f.md": filepath.Join(out, "secret.md"), "od": out} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := memtool.New(s, nil)
	for _, p := range []string{"/memories/f.md", "/memories/od", "/memories/od/secret.md"} {
		_, err := m.Search(context.Background(), memtool.SearchQuery{Query: "zebra", Path: p})
		if se := (*memtool.SearchError)(nil); !errors.As(err, &se) {
			t.Errorf("search of %s: %v, want a *SearchError", p, err)
		}
		r := m.SearchTool(context.Background(), []byte(`{"query":"zebra","path":"`+p+`"}`))
		if !r.IsError || !strings.Contains(r.Text, "escape") || strings.Contains(r.Text, "secret") {
			t.Errorf("memory_search of %s: %q, want the refusal view gives", p, r.Text)
		}
	}
}

// refusingStat is a store whose Stat fails with err.
type refusingStat struct {
	memtool.Store
	err error
}

func (s refusingStat) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return memtool.FileInfo{}, s.err
}

// A store or policy that refuses a search's path with a reason for the
// model (a Refusal) is answered with that reason, as view answers it,
// and a busy store as busy: memory_search said the store did not answer.
func TestSearchToolStoreRefusal(t *testing.T) {
	s, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		err  error
		want string
	}{
		{memtool.Refusal("Access to /memories/x is denied by policy"), "Error: Access to /memories/x is denied by policy"},
		{memtool.ErrBusy, "busy"},
	} {
		m := memtool.New(refusingStat{s, c.err}, nil)
		r := m.SearchTool(context.Background(), []byte(`{"query":"zebra","path":"/memories/x"}`))
		if !r.IsError || !strings.Contains(r.Text, c.want) {
			t.Errorf("memory_search with Stat failing with %v: %q, want %q", c.err, r.Text, c.want)
		}
	}
}

// A search its caller cancelled is answered as cancelled, not as a store
// that did not answer (to be tried again), and is no store failure in
// the log.
func TestSearchToolCancelled(t *testing.T) {
	s, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var log bytes.Buffer
	m := memtool.New(s, &memtool.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := m.SearchTool(ctx, []byte(`{"query":"zebra"}`))
	if !r.IsError || !strings.Contains(r.Text, "cancelled") || strings.Contains(r.Text, "did not answer") {
		t.Errorf("memory_search cancelled: %q", r.Text)
	}
	if strings.Contains(log.String(), "store failure") {
		t.Errorf("a cancelled search is logged as a store failure: %s", log.String())
	}
}

// A limit too large is refused naming the limit the model gave: 1e20 was
// refused as "The search limit 2147483647 is out of range".
func TestSearchToolHugeLimit(t *testing.T) {
	s, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := memtool.New(s, nil)
	for _, limit := range []string{"1e20", "3000000000", "10001"} {
		r := m.SearchTool(context.Background(), []byte(`{"query":"zebra","limit":`+limit+`}`))
		if !r.IsError || !strings.Contains(r.Text, " "+limit+" ") || strings.Contains(r.Text, "2147483647") {
			t.Errorf("memory_search with limit %s: %q", limit, r.Text)
		}
	}
}
