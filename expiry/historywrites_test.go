package expiry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
)

// indexWrites is a directory store that counts the writes of the access
// index that reach it.
type indexWrites struct {
	*filestore.Store
	n int
}

func (s *indexWrites) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	err := s.Store.WriteFile(ctx, name, data, mode)
	if err == nil && name == expiry.IndexName {
		s.n++
	}
	return err
}

func (s *indexWrites) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	err := s.Store.Update(ctx, name, limit, fn)
	if err == nil && name == expiry.IndexName {
		s.n++
	}
	return err
}

// TestHistoryDeleteWritesIndexOnce: under the history policy a delete is a
// rename into history's trash and then one rename per file into its
// versions' places. The access index is written once, to forget what was
// deleted, and not at all when it held no access of it: history's own
// moves are between names the index never records, and writing the whole
// index for each of them made deleting a directory cost a rewrite of the
// index per file.
func TestHistoryDeleteWritesIndexOnce(t *testing.T) {
	ctx := context.Background()
	inner := &indexWrites{Store: backendtest.FileStore(t)}
	mem := memtool.New(history.New(expiry.New(inner, nil), nil), nil)
	run := func(in map[string]any) {
		t.Helper()
		b, _ := json.Marshal(in)
		if r := mem.Run(ctx, b); r.IsError {
			t.Fatalf("%s: %s", b, r.Text)
		}
	}
	for _, f := range []string{"a", "b", "c", "e/f"} {
		run(map[string]any{"command": "create", "path": "/memories/d/" + f, "file_text": "one\n"})
	}
	before := inner.n
	run(map[string]any{"command": "delete", "path": "/memories/d"})
	if got := inner.n - before; got != 1 {
		t.Errorf("deleting a directory of 4 files wrote the index %d times, want 1", got)
	}
	// A file the index holds no access of (written around the wrapper).
	if err := inner.WriteFile(ctx, "g", []byte("x"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	before = inner.n
	run(map[string]any{"command": "delete", "path": "/memories/g"})
	if got := inner.n - before; got != 0 {
		t.Errorf("deleting a file without a recorded access wrote the index %d times, want 0", got)
	}
	vs, err := history.Versions(ctx, inner, "/memories/d/e/f")
	if err != nil || len(vs) != 1 {
		t.Errorf("versions of the deleted d/e/f: %v, %v", vs, err)
	}
}
