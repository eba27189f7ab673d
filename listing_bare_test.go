package memtool_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/storetest"
)

// A view of a directory store is the view of the same store without
// DirLister and NameLister (storetest.Bare), byte for byte, whole or cut,
// on the ordinary disk and on a tmpfs: for an empty directory, names of
// 255 bytes, names that are not UTF-8, the store's own entries, FIFOs and
// a socket (beside names as long, filling the reads), a directory far
// larger than a view, and one that held 20,000 files and holds 2 (on
// ext4 its size stays that of 20,000 entries).
func TestListingIsListingOfBareStore(t *testing.T) {
	t.Run("disk", func(t *testing.T) { viewsAsBare(t, t.TempDir()) })
	t.Run("tmpfs", func(t *testing.T) { viewsAsBare(t, hostfault.Tmpfs(t, "size=64m,mode=0700")) })
}

func viewsAsBare(t *testing.T, dir string) {
	lay := func(name string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name[:3]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := func(i int, c string) string { return fmt.Sprintf("%03d%s", i, strings.Repeat(c, 252)) }
	lay("a.md")
	lay("bad\xff.md")
	lay(".memtool-leftover")
	lay("sub/.memtool.tmp")
	lay("sub/" + strings.Repeat("é", 127) + "x")
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		lay("long/" + long(i, "n"))
	}
	for i := range 8 {
		for _, d := range []string{"", "long/"} {
			if err := syscall.Mkfifo(filepath.Join(dir, d+long(i, "f")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 3000 {
		lay(fmt.Sprintf("many/n%05d.md", i))
	}
	if err := os.Mkdir(filepath.Join(dir, "shrunk"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shrunk/file-%06d.md", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20000 {
		if i%10000 != 7 {
			if err := os.Remove(filepath.Join(dir, fmt.Sprintf("shrunk/file-%06d.md", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, max := range []int{16000, 3000, 900, 400} {
		for _, p := range []string{"/memories", "/memories/long", "/memories/many", "/memories/shrunk", "/memories/empty", "/memories/sub"} {
			in := fmt.Appendf(nil, `{"command":"view","path":%q}`, p)
			opts := &memtool.Options{MaxViewChars: max}
			got := memtool.New(s, opts).Run(ctx, in)
			want := memtool.New(storetest.Bare(s), opts).Run(ctx, in)
			if got != want {
				t.Errorf("max %d, view %s:\nby DirLister:\n%s\nby ReadDir:\n%s", max, p, got.Text, want.Text)
			}
			if got.IsError || strings.Contains(got.Text, "memtool-") || strings.Contains(got.Text, "fff") {
				t.Errorf("max %d, view %s shows what it must not:\n%s", max, p, got.Text)
			}
		}
	}
}
