package filestore_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
)

// OpenFile with the largest limit, math.MaxInt64 (no limit, as ReadFile
// has it), reads the file whole, and so does a Memory whose MaxReadSize is
// that limit when it views a file as a stream.
func TestOpenFileLargestLimit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	content := "one\ntwo\nthree\n"
	must.Succeed(t, os.WriteFile(filepath.Join(dir, "a.md"), []byte(content), 0o600))
	s, err := filestore.Open(dir, nil)
	must.Succeed(t, err)
	defer s.Close()

	r, size, err := s.OpenFile(ctx, "a.md", math.MaxInt64)
	must.Succeed(t, err)
	got, err := io.ReadAll(r)
	must.Succeed(t, r.Close())
	if err != nil || string(got) != content || size != int64(len(content)) {
		t.Errorf("OpenFile(a.md, MaxInt64) read %q (size %d), %v; want %q", got, size, err, content)
	}

	mem := memtool.New(s, &memtool.Options{MaxReadSize: math.MaxInt64})
	res := mem.Run(ctx, []byte(`{"command":"view","path":"/memories/a.md"}`))
	if res.IsError || !strings.Contains(res.Text, "three") {
		t.Errorf("view with MaxReadSize MaxInt64 = %q (error %v), want the file", res.Text, res.IsError)
	}
}
