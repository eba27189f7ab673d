package server

import (
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/storetest"
)

// TestReadOnlyReadsTheCheapWays: a read-scope key's memory reads as the
// store below it does, with its ways of listing a large directory by
// names and streaming a large file, and so answers views as that store
// would.
func TestReadOnlyReadsTheCheapWays(t *testing.T) {
	storetest.RunReadForwarding(t, backendtest.FileStore(t), func(s memtool.Store) memtool.Store {
		return newReadOnly(s)
	})
}

// TestReadOnlyRefusesEveryWrite: each write of a read-scope key is the
// refusal, and the store below is left as it was.
func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	ctx := t.Context()
	inner := backendtest.FileStore(t)
	if err := inner.WriteFile(ctx, "a.txt", []byte("kept\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	r := newReadOnly(inner)
	for op, err := range map[string]error{
		"WriteFile": r.WriteFile(ctx, "b.txt", []byte("x"), memtool.CreateOnly),
		"Update":    r.Update(ctx, "a.txt", 1<<20, func([]byte) ([]byte, error) { return []byte("changed"), nil }),
		"Mkdir":     r.Mkdir(ctx, "d"),
		"Remove":    r.Remove(ctx, "a.txt"),
		"RemoveAll": r.RemoveAll(ctx, "a.txt"),
		"Rename":    r.Rename(ctx, "a.txt", "c.txt"),
	} {
		var refusal memtool.Refusal
		if !errors.As(err, &refusal) || refusal != readOnlyRefusal {
			t.Errorf("%s: %v, want the read-only refusal", op, err)
		}
	}
	entries, err := inner.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name != "a.txt" {
		t.Fatalf("store after the refused writes: %v", entries)
	}
	if data, err := inner.ReadFile(ctx, "a.txt", 1<<20); err != nil || string(data) != "kept\n" {
		t.Fatalf("a.txt after the refused writes: %q, %v", data, err)
	}
}
