package encrypt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
)

// The tests of Rekey on a live store: files are moved and written while
// it walks.

// listingHook is a store whose ReadDir of one of dirs runs hook, with the
// directory's name, after listing it: the moment a walk has that
// directory's entries in hand. It stands in only for the timing of a
// concurrent writer: the writer's own operations go to the real store.
type listingHook struct {
	memtool.Store
	dirs []string
	hook func(dir string)
}

func (h *listingHook) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := h.Store.ReadDir(ctx, name)
	if slices.Contains(h.dirs, name) && h.hook != nil {
		h.hook(name)
	}
	return entries, err
}

// keyOf returns the ID of the key the stored file name is sealed with.
func keyOf(t *testing.T, inner memtool.Store, name string) string {
	t.Helper()
	b, err := inner.ReadFile(context.Background(), name, 1<<20)
	if err != nil || len(b) < encrypt.Overhead {
		t.Fatalf("%s: %q, %v", name, b, err)
	}
	return string(bytes.TrimRight(b[4:4+encrypt.MaxKeyIDLen], "\x00"))
}

// liveStores are the real stores the tests run over.
func liveStores(t *testing.T) map[string]func() memtool.Store {
	return map[string]func() memtool.Store{
		"memstore":  func() memtool.Store { return memstore.New() },
		"filestore": func() memtool.Store { return openDir(t, filepath.Join(t.TempDir(), "m")) },
	}
}

// TestRekeyFileMovedBehindIt: a file moved, while Rekey runs, from a place
// it has not walked yet to one it has walked (the model renames q/x to
// p/moved; expiry or history move a file out of their own entry into the
// tree) is sealed with the new key when Rekey reports success, so that
// dropping the old key loses nothing.
func TestRekeyFileMovedBehindIt(t *testing.T) {
	ctx := context.Background()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	for _, tc := range []struct {
		name string
		from func(other string) string // the file moved, from the directory not listed yet
	}{
		{"a rename by the model", func(other string) string { return other + "/x" }},
		{"a restore out of a policy's entry", func(string) string { return ".memtool-own/x" }},
	} {
		for name, open := range liveStores(t) {
			t.Run(name+", "+tc.name, func(t *testing.T) {
				inner := open()
				old := wrap(t, inner, nil, k1)
				files := []string{"p/x", "q/x", ".memtool-own/x"}
				for _, d := range []string{"p", "q", ".memtool-own"} {
					if err := old.Mkdir(ctx, d); err != nil {
						t.Fatal(err)
					}
				}
				for _, f := range files {
					if err := old.WriteFile(ctx, f, []byte("text of "+f), memtool.CreateOnly); err != nil {
						t.Fatal(err)
					}
				}

				// The writer is a process that already has the new key
				// first, as the rotation asks; its rename moves the
				// stored bytes as they are. It moves a file into the
				// first of p and q that Rekey lists (the store lists in
				// any order), from a place Rekey walks later.
				writer := wrap(t, inner, nil, k2, k1)
				hooked := &listingHook{Store: inner, dirs: []string{"p", "q"}}
				hooked.hook = func(listed string) {
					hooked.hook = nil
					other := map[string]string{"p": "q", "q": "p"}[listed]
					from, to := tc.from(other), listed+"/moved"
					if err := writer.(memtool.Renamer).Rename(ctx, from, to); err != nil {
						t.Errorf("rename %s %s: %v", from, to, err)
					}
					files[slices.Index(files, from)] = to
				}
				n, err := encrypt.Rekey(ctx, wrap(t, hooked, nil, k2, k1), ".memtool-own")
				if err != nil {
					t.Fatalf("Rekey: %d, %v", n, err)
				}
				if hooked.hook != nil {
					t.Fatal("the rename did not run")
				}
				if n != 3 {
					t.Errorf("Rekey re-encrypted %d files, want 3", n)
				}
				onlyNew := wrap(t, inner, nil, k2)
				for _, f := range files {
					if k := keyOf(t, inner, f); k != "k2" {
						t.Errorf("%s is still sealed with key %s after Rekey reported success", f, k)
					}
					if got := text(t, onlyNew, f); got == "" {
						t.Errorf("%s does not open with the new key alone", f)
					}
				}
			})
		}
	}
}

// TestRekeyWriterWithOldKey: a writer that still seals with the old key
// while Rekey runs (a process not restarted after the rotation) leaves a
// file under the old key behind each pass; Rekey gives up after a bounded
// number of passes with ErrRekeyIncomplete instead of reporting success.
// Once the writer stops, Rekey succeeds and no file is left under the old
// key.
func TestRekeyWriterWithOldKey(t *testing.T) {
	ctx := context.Background()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	for name, open := range liveStores(t) {
		t.Run(name, func(t *testing.T) {
			inner := open()
			old := wrap(t, inner, nil, k1)
			if err := old.Mkdir(ctx, "0"); err != nil {
				t.Fatal(err)
			}
			if err := old.WriteFile(ctx, "0/a", []byte("a"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			writes := 0
			hooked := &listingHook{Store: inner, dirs: []string{"0"}}
			hooked.hook = func(string) {
				writes++
				if err := old.WriteFile(ctx, fmt.Sprintf("0/w%d", writes), []byte("w"), memtool.CreateOnly); err != nil {
					t.Error(err)
				}
			}
			both := wrap(t, hooked, nil, k2, k1)
			n, err := encrypt.Rekey(ctx, both)
			if !errors.Is(err, encrypt.ErrRekeyIncomplete) {
				t.Fatalf("Rekey with an old-key writer: %d, %v; want ErrRekeyIncomplete", n, err)
			}
			if n != writes { // 0/a and every write but the last
				t.Errorf("Rekey re-encrypted %d files with %d writes", n, writes)
			}

			hooked.hook = nil
			if n, err := encrypt.Rekey(ctx, both); err != nil || n != 1 {
				t.Fatalf("Rekey once the writer stopped: %d, %v; want 1", n, err)
			}
			entries, err := inner.ReadDir(ctx, "0")
			if err != nil || len(entries) != writes+1 {
				t.Fatalf("0 lists %v, %v", entries, err)
			}
			for _, e := range entries {
				if k := keyOf(t, inner, "0/"+e.Name); k != "k2" {
					t.Errorf("0/%s is sealed with key %s", e.Name, k)
				}
			}
		})
	}
}

// TestRekeyNothingToDo: a store already under the new key is read, not
// written: Rekey re-encrypts nothing and leaves every stored byte as it
// is.
func TestRekeyNothingToDo(t *testing.T) {
	ctx := context.Background()
	k2 := newKey(t, "k2")
	inner := memstore.New()
	s := wrap(t, inner, nil, k2)
	for _, f := range []string{"a", "b"} {
		if err := s.WriteFile(ctx, f, []byte("text of "+f), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string][]byte{}
	for _, f := range []string{"a", "b"} {
		before[f], _ = inner.ReadFile(ctx, f, 1<<20)
	}
	if n, err := encrypt.Rekey(ctx, wrap(t, inner, nil, k2, newKey(t, "k1"))); err != nil || n != 0 {
		t.Fatalf("Rekey: %d, %v; want 0", n, err)
	}
	for f, b := range before {
		if got, _ := inner.ReadFile(ctx, f, 1<<20); !slices.Equal(got, b) {
			t.Errorf("%s was rewritten", f)
		}
	}
}

// TestRekeyChecksFilesUnderTheNewKey: Rekey succeeds only if every file
// opens with the writing key. A file whose header names the writing key's
// ID but that does not open with it (sealed with another key of the same
// ID, as keygen --id 2026 --rotate run on two hosts' copies of a key file
// makes; or damaged) stops Rekey with its *Error, instead of counting as
// done: a success would let the operator drop the old keys believing
// every file opens with the new one.
func TestRekeyChecksFilesUnderTheNewKey(t *testing.T) {
	ctx := context.Background()
	for name, open := range liveStores(t) {
		t.Run(name, func(t *testing.T) {
			old, newHere, newThere := newKey(t, "old"), newKey(t, "new"), newKey(t, "new")
			inner := open()
			for f, k := range map[string]encrypt.Key{"a": old, "b": newThere, "c": newHere} {
				if err := wrap(t, inner, nil, k).WriteFile(ctx, f, []byte("text of "+f), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
			}
			s := wrap(t, inner, nil, newHere, old)
			_, err := encrypt.Rekey(ctx, s)
			var ee *encrypt.Error
			if !errors.As(err, &ee) || !errors.Is(err, encrypt.ErrAuth) || ee.Path != "/memories/b" {
				t.Fatalf("Rekey over a file under another key named new: %v; want the ErrAuth of /memories/b", err)
			}

			// Once the stranger is gone, a damaged file is found as well.
			if err := inner.Remove(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			if _, err := encrypt.Rekey(ctx, s); err != nil || keyOf(t, inner, "a") != "new" {
				t.Fatalf("Rekey: %v; a under key %q", err, keyOf(t, inner, "a"))
			}
			err = inner.Update(ctx, "c", 1<<20, func(b []byte) ([]byte, error) {
				b = bytes.Clone(b)
				b[len(b)-1] ^= 1
				return b, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := encrypt.Rekey(ctx, s); !errors.Is(err, encrypt.ErrAuth) || !errors.As(err, &ee) || ee.Path != "/memories/c" {
				t.Errorf("Rekey over a damaged file under key new: %v; want the ErrAuth of /memories/c", err)
			}
		})
	}
}
