package filestore_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// OpenFile refuses what ReadFile refuses, at the open, and a read past
// the limit (a file that grew) fails with ErrTooLarge.
func TestOpenFile(t *testing.T) {
	ctx := context.Background()
	dir, s := listTree(t)
	r, size, err := s.OpenFile(ctx, "b.md", 1<<20)
	must(t, err)
	got, err := io.ReadAll(r)
	must(t, err)
	must(t, r.Close())
	if want, _ := s.ReadFile(ctx, "b.md", 1<<20); string(got) != string(want) || size != int64(len(want)) {
		t.Errorf("OpenFile read %q (size %d), ReadFile %q", got, size, want)
	}
	for name, want := range map[string]error{
		"missing.md":  memtool.ErrNotExist,
		"sub":         memtool.ErrIsDir,
		"fifo":        memtool.ErrIrregular,
		"a2.md":       memtool.ErrIrregular,
		"link-out.md": memtool.ErrEscapes,
	} {
		if _, _, err := s.OpenFile(ctx, name, 1<<20); !errors.Is(err, want) {
			t.Errorf("OpenFile(%s): %v, want %v", name, err, want)
		}
	}
	if _, _, err := s.OpenFile(ctx, "b.md", 10); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("OpenFile over the limit: %v, want ErrTooLarge", err)
	}
	// The file grows past the limit after the open.
	p := filepath.Join(dir, "grows.md")
	must(t, os.WriteFile(p, []byte("0123456789"), 0o600))
	r, _, err = s.OpenFile(ctx, "grows.md", 10)
	must(t, err)
	defer r.Close()
	must(t, os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o600))
	if _, err := io.ReadAll(r); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("reading a file grown past the limit: %v, want ErrTooLarge", err)
	}
}
