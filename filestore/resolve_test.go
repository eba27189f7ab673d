package filestore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// ResolveName follows the links on a name's way as the store does, keeps
// what does not exist as given, and gives back as it is a name through a
// link the store does not follow (out of the store, a loop).
func TestResolveName(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	ctx := t.Context()
	for _, d := range []string{"real/sub", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeHostFile(t, filepath.Join(dir, "real/sub/a.md"), "a")
	for link, target := range map[string]string{
		"link":         "real",
		"other/up":     "../real/sub",
		"chain":        "link",
		"file.md":      "real/sub/a.md",
		"dot":          ".",
		"dangling":     "gone",
		"out":          "../..",
		"abs":          dir,
		"loop1":        "loop2",
		"loop2":        "loop1",
		"real/sub/own": "../../other",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"":                  "",
		"real/sub/a.md":     "real/sub/a.md",
		"link":              "real",
		"link/sub/a.md":     "real/sub/a.md",
		"link/sub/new/x.md": "real/sub/new/x.md",
		"other/up/a.md":     "real/sub/a.md",
		"chain/sub":         "real/sub",
		"file.md":           "real/sub/a.md",
		"real/sub/a.md/own": "real/sub/a.md/own",
		"dot/link/sub":      "real/sub",
		"dangling/x.md":     "gone/x.md",
		"link/sub/own/up":   "real/sub",
		"missing/link/a.md": "missing/link/a.md",
		"out/x.md":          "out/x.md",
		"abs/real":          "abs/real",
		"loop1/x.md":        "loop1/x.md",
	} {
		if got := s.ResolveName(ctx, name); got != want {
			t.Errorf("ResolveName(%q) = %q, want %q", name, got, want)
		}
	}
	if got := memtool.ResolveName(ctx, wrapped{s, memtool.Forward(s, nil)}, "link/sub"); got != "real/sub" {
		t.Errorf("memtool.ResolveName through a wrapper = %q, want real/sub", got)
	}
}

// wrapped is a store under a wrapper with no policy.
type wrapped struct {
	memtool.Store
	memtool.Forwarder
}

func BenchmarkResolveName(b *testing.B) {
	dir := b.TempDir()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Mkdir(b.Context(), "notes"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s.ResolveName(b.Context(), "notes/today.md")
	}
}
