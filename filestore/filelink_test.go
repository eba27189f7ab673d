package filestore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
)

// fileLinkStore opens a store holding d/a.md and f.md, a link to it made
// by the operator (and chain.md, a link to that link).
func fileLinkStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "d", "a.md"), "old")
	for link, target := range map[string]string{"f.md": "d/a.md", "chain.md": "f.md"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// isLinkTo fails t unless name in dir is still a symbolic link to target.
func isLinkTo(t *testing.T, dir, name, target string) {
	t.Helper()
	got, err := os.Readlink(filepath.Join(dir, name))
	if err != nil || got != target {
		t.Errorf("%s: link to %q, %v; want it kept, a link to %q", name, got, err, target)
	}
}

// An edit through a link to a file (str_replace, insert, an overwriting
// create: Update; WriteFile with Replace) changes the file the link leads
// to, and the link stays: both names keep meaning one file. It replaced
// the link with a regular file holding the new content, leaving d/a.md as
// it was, so that a reader of d/a.md saw the old text.
func TestEditThroughFileLink(t *testing.T) {
	for _, via := range []string{"f.md", "chain.md"} {
		t.Run(via, func(t *testing.T) {
			dir := fileLinkStore(t)
			s := open(t, dir, nil)
			ctx := t.Context()
			err := s.Update(ctx, via, 100, func(old []byte) ([]byte, error) { return append(old, " updated"...), nil })
			if err != nil {
				t.Fatalf("Update(%s): %v", via, err)
			}
			if got := hostContent(t, filepath.Join(dir, "d", "a.md")); got != "old updated" {
				t.Errorf("after Update(%s), d/a.md = %q, want %q", via, got, "old updated")
			}
			if err := s.WriteFile(ctx, via, []byte("replaced"), memtool.Replace); err != nil {
				t.Fatalf("WriteFile(%s, Replace): %v", via, err)
			}
			if got := hostContent(t, filepath.Join(dir, "d", "a.md")); got != "replaced" {
				t.Errorf("after WriteFile(%s), d/a.md = %q, want %q", via, got, "replaced")
			}
			isLinkTo(t, dir, "f.md", "d/a.md")
			isLinkTo(t, dir, "chain.md", "f.md")
			for _, name := range []string{"f.md", "chain.md", "d/a.md"} {
				if data, err := s.ReadFile(ctx, name, 100); err != nil || string(data) != "replaced" {
					t.Errorf("ReadFile(%s) = %q, %v; want %q", name, data, err, "replaced")
				}
			}
			entries, err := os.ReadDir(filepath.Join(dir, "d"))
			if err != nil || len(entries) != 1 {
				t.Errorf("d holds %v, %v; want a.md alone (no temp file)", entries, err)
			}
		})
	}
}

// A create (CreateOnly) of a link's name fails, whether the link leads to
// a file or nowhere, and changes neither the link nor its target.
func TestCreateOverFileLinkRefused(t *testing.T) {
	dir := fileLinkStore(t)
	if err := os.Symlink("d/none.md", filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	for _, name := range []string{"f.md", "dangling.md"} {
		if err := s.WriteFile(t.Context(), name, []byte("new"), memtool.CreateOnly); !errors.Is(err, memtool.ErrExist) {
			t.Errorf("WriteFile(%s, CreateOnly) = %v, want ErrExist", name, err)
		}
	}
	isLinkTo(t, dir, "f.md", "d/a.md")
	isLinkTo(t, dir, "dangling.md", "d/none.md")
	if got := hostContent(t, filepath.Join(dir, "d", "a.md")); got != "old" {
		t.Errorf("d/a.md = %q, want it unchanged", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "d", "none.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("d/none.md: %v; want nothing created there", err)
	}
}

// A link that leads to one of the store's own files (the lock file, a
// tenant's memory) is not written through: the path gate keeps the model
// from those names, and a link must not open a way round it.
func TestEditThroughLinkToOwnFileRefused(t *testing.T) {
	dir := fileLinkStore(t)
	writeHostFile(t, filepath.Join(dir, ".memtool-own", "x.md"), "own")
	if err := os.Symlink(".memtool-own/x.md", filepath.Join(dir, "own.md")); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, nil)
	ctx := t.Context()
	if err := s.Update(ctx, "own.md", 100, func([]byte) ([]byte, error) { return []byte("pwned"), nil }); err == nil {
		t.Errorf("Update(own.md) succeeded")
	}
	if err := s.WriteFile(ctx, "own.md", []byte("pwned"), memtool.Replace); err == nil {
		t.Errorf("WriteFile(own.md, Replace) succeeded")
	}
	if got := hostContent(t, filepath.Join(dir, ".memtool-own", "x.md")); got != "own" {
		t.Errorf(".memtool-own/x.md = %q, want it unchanged", got)
	}
	isLinkTo(t, dir, "own.md", ".memtool-own/x.md")
}

// Rename and removal of a link move or remove the link, never the file it
// leads to.
func TestRenameAndRemoveOfFileLink(t *testing.T) {
	dir := fileLinkStore(t)
	s := open(t, dir, nil)
	ctx := t.Context()
	if err := s.Rename(ctx, "f.md", "g.md"); err != nil {
		t.Fatal(err)
	}
	isLinkTo(t, dir, "g.md", "d/a.md")
	if err := s.Remove(ctx, "g.md"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveAll(ctx, "chain.md"); err != nil {
		t.Fatal(err)
	}
	// A link to a directory too: the link goes, the directory and its
	// files stay.
	if err := os.Symlink("d", filepath.Join(dir, "dl")); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveAll(ctx, "dl"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f.md", "g.md", "chain.md", "dl"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v; want it gone", name, err)
		}
	}
	if got := hostContent(t, filepath.Join(dir, "d", "a.md")); got != "old" {
		t.Errorf("d/a.md = %q, want it unchanged", got)
	}
}
