package durable_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool/internal/durable"
)

func TestWriteNew(t *testing.T) {
	name := filepath.Join(t.TempDir(), "k")
	if err := durable.WriteNew(name, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := durable.WriteNew(name, []byte("two"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over a file = %v, want fs.ErrExist", err)
	}
	if b, err := os.ReadFile(name); string(b) != "one" || err != nil {
		t.Errorf("after WriteNew over it, the file holds %q, %v", b, err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if err := durable.WriteNew(filepath.Join(t.TempDir(), "missing", "k"), nil, 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteNew in a missing directory = %v", err)
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "k")
	for _, text := range []string{"one", "two"} {
		if err := durable.Replace(name, []byte(text)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(name); string(b) != text || err != nil {
			t.Errorf("after Replace(%q): %q, %v", text, b, err)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Errorf("the directory holds %v, %v; want k alone (no temporary file left)", entries, err)
	}
	// A name that is a directory cannot be replaced; nothing is left behind.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := durable.Replace(sub, []byte("x")); err == nil {
		t.Error("Replace of a non-empty directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("after a failed Replace the directory holds %v", entries)
	}
}
