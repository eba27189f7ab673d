package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/memstore"
)

// TestFirstListed: the quick look at a store's first file finds the file
// that walkMemory visits first, on a store that lists names, and gives up
// ("") on one that does not, leaving the walk to findFile.
func TestFirstListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	mem := memstore.New()
	for _, s := range []memtool.Store{fs, mem} {
		for _, dir := range []string{"a", "b", "b/c"} {
			if err := s.Mkdir(ctx, dir); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"b/c/deep.md", "b/z.md", "y.md"} {
			if err := s.WriteFile(ctx, f, []byte("text"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
	}
	var walked string
	err = walkMemory(ctx, fs, func(name string, fi memtool.FileInfo) error {
		if fi.IsRegular() {
			walked = name
			return errStopWalk
		}
		return nil
	})
	if err != errStopWalk || walked != "b/c/deep.md" {
		t.Fatalf("walkMemory's first file: %q, %v", walked, err)
	}
	if got := firstListed(ctx, fs, "", 0); got != walked {
		t.Errorf("firstListed on the file store: %q, want %q", got, walked)
	}
	if got := firstListed(ctx, mem, "", 0); got != "" {
		t.Errorf("firstListed on a store without NameLister: %q, want \"\"", got)
	}
}

// TestProberReadsHeads: on a directory store the prober judges a file
// from its first encrypt.Overhead bytes, and gives the answer that
// reading the whole file through encryption gives (what it does on other
// stores), for plaintext, encrypted, short and look-alike files; the
// quick look at the root finds its smallest regular file among the first
// names the directory gives.
func TestProberReadsHeads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	sealed := backendtest.Encrypted(t, fs)
	big := bytes.Repeat([]byte("plain text line\n"), 1<<16)
	files := map[string][]byte{
		"b-plain.md": big,
		"c-short.md": []byte("hi"),
		"d-mte2.md":  append([]byte("mte2"), make([]byte, encrypt.Overhead)...),
		"e-mte2.md":  []byte("mte2 but short"),
	}
	for name, data := range files {
		if err := fs.WriteFile(ctx, name, data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	if err := sealed.WriteFile(ctx, "f-sealed.md", big, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := fs.Mkdir(ctx, "a-dir"); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{ // isPlain, sealed
		"b-plain.md": {true, false}, "c-short.md": {true, false}, "e-mte2.md": {true, false},
		"d-mte2.md": {false, true}, "f-sealed.md": {false, true},
	}
	p, err := newProber(fs, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if p.root == nil {
		t.Fatal("the prober does not read heads on a directory store")
	}
	whole, err := newProber(otherStore{fs}, "") // not a *filestore.Store: reads whole files
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		isPlain, isSealed := p.file(ctx, name)
		if [2]bool{isPlain, isSealed} != w {
			t.Errorf("%s: plain %v, sealed %v; want %v", name, isPlain, isSealed, w)
		}
		if wp, ws := whole.file(ctx, name); wp != isPlain || ws != isSealed {
			t.Errorf("%s: the head says plain %v, sealed %v; the whole file %v, %v", name, isPlain, isSealed, wp, ws)
		}
	}
	if got := p.firstRead(ctx); got != "b-plain.md" {
		t.Errorf("firstRead: %q, want b-plain.md", got)
	}
	if got := whole.firstRead(ctx); got != "" {
		t.Errorf("firstRead on a store that is no directory store: %q, want \"\"", got)
	}
}

// otherStore hides the type of a store.
type otherStore struct{ memtool.Store }
