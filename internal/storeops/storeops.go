// Package storeops lists the methods of a store as operations on names of
// their own, for the tests that make a store fail (a held lock, a frozen
// server, a full disk) and then check that no failed write changed
// anything; and CheckUnchangedUpdate, for the tests that an Update to the
// same content writes nothing.
package storeops

import (
	"context"
	"testing"

	"github.com/memtool/memtool"
)

// Op is one method of a store, on a name that Seed prepares.
type Op struct {
	Name  string
	Write bool
	Run   func(ctx context.Context, s memtool.Store) error
	// Done reports whether the write's change is in s (nil for a read).
	Done func(ctx context.Context, s memtool.Store) bool
}

// All returns the operations: the three reads, then the six writes. The
// writes need memtool.RemoveAller and memtool.Renamer.
func All() []Op {
	return []Op{
		{"Stat", false, func(ctx context.Context, s memtool.Store) error { _, err := s.Stat(ctx, "kept"); return err }, nil},
		{"ReadFile", false, func(ctx context.Context, s memtool.Store) error { _, err := s.ReadFile(ctx, "kept", 100); return err }, nil},
		{"ReadDir", false, func(ctx context.Context, s memtool.Store) error { _, err := s.ReadDir(ctx, "tree"); return err }, nil},
		{"WriteFile", true,
			func(ctx context.Context, s memtool.Store) error {
				return s.WriteFile(ctx, "new", []byte("new"), memtool.CreateOnly)
			},
			func(ctx context.Context, s memtool.Store) bool { return Exists(ctx, s, "new") }},
		{"Update", true,
			func(ctx context.Context, s memtool.Store) error {
				return s.Update(ctx, "kept", 100, func([]byte) ([]byte, error) { return []byte("changed"), nil })
			},
			func(ctx context.Context, s memtool.Store) bool {
				b, _ := s.ReadFile(ctx, "kept", 100)
				return string(b) == "changed"
			}},
		{"Mkdir", true,
			func(ctx context.Context, s memtool.Store) error { return s.Mkdir(ctx, "newdir") },
			func(ctx context.Context, s memtool.Store) bool { return Exists(ctx, s, "newdir") }},
		{"Remove", true,
			func(ctx context.Context, s memtool.Store) error { return s.Remove(ctx, "doomed") },
			func(ctx context.Context, s memtool.Store) bool { return !Exists(ctx, s, "doomed") }},
		{"RemoveAll", true,
			func(ctx context.Context, s memtool.Store) error {
				return s.(memtool.RemoveAller).RemoveAll(ctx, "tree")
			},
			func(ctx context.Context, s memtool.Store) bool { return !Exists(ctx, s, "tree") }},
		{"Rename", true,
			func(ctx context.Context, s memtool.Store) error {
				return s.(memtool.Renamer).Rename(ctx, "moving", "moved")
			},
			func(ctx context.Context, s memtool.Store) bool { return Exists(ctx, s, "moved") }},
	}
}

// Writes returns the writes of All.
func Writes() []Op {
	var w []Op
	for _, op := range All() {
		if op.Write {
			w = append(w, op)
		}
	}
	return w
}

// Exists reports whether s has an entry at name.
func Exists(ctx context.Context, s memtool.Store, name string) bool {
	_, err := s.Stat(ctx, name)
	return err == nil
}

// Seed writes the entries the operations work on.
func Seed(t *testing.T, s memtool.Store) {
	t.Helper()
	ctx := context.Background()
	for _, err := range []error{
		s.WriteFile(ctx, "kept", []byte("kept"), memtool.CreateOnly),
		s.WriteFile(ctx, "doomed", []byte("d"), memtool.CreateOnly),
		s.Mkdir(ctx, "tree"),
		s.WriteFile(ctx, "tree/leaf", []byte("l"), memtool.CreateOnly),
		s.WriteFile(ctx, "moving", []byte("m"), memtool.CreateOnly),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// CheckUnchanged fails t if a write made its change in s, or the seeded
// content is not there.
func CheckUnchanged(t *testing.T, s memtool.Store) {
	t.Helper()
	ctx := context.Background()
	for _, op := range Writes() {
		if op.Done(ctx, s) {
			t.Errorf("%s failed but made its change", op.Name)
		}
	}
	if got, err := s.ReadFile(ctx, "moving", 100); err != nil || string(got) != "m" {
		t.Errorf("acknowledged file = %q, %v; want m", got, err)
	}
}

// CheckUnchangedUpdate creates the file name in s, then checks that an
// Update whose fn returns the old content writes nothing and that one
// that changes it writes: mark returns what a write of the file changes
// (a row's xmin, an inode, a count of requests), compared with ==.
func CheckUnchangedUpdate(t *testing.T, s memtool.Store, name string, mark func() any) {
	t.Helper()
	ctx := context.Background()
	if err := s.WriteFile(ctx, name, []byte("text"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	before := mark()
	if err := s.Update(ctx, name, 100, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if mark() != before {
		t.Errorf("an Update to the same content wrote the file")
	}
	if err := s.Update(ctx, name, 100, func(old []byte) ([]byte, error) { return append(old, '!'), nil }); err != nil {
		t.Fatal(err)
	}
	if mark() == before {
		t.Errorf("an Update to new content did not write the file")
	}
}
