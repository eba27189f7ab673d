package memtool_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// openerStore is a FileOpener over a memory store whose readers give at
// most step bytes a read, so that lines and UTF-8 sequences straddle
// reads. It counts the files it opens.
type openerStore struct {
	memtool.Store
	step   int
	opened atomic.Int64
}

func (s *openerStore) OpenFile(ctx context.Context, name string, limit int64) (io.ReadCloser, int64, error) {
	data, err := s.Store.ReadFile(ctx, name, limit)
	if err != nil {
		return nil, 0, err
	}
	s.opened.Add(1)
	// The size given is sometimes wrong (the file changed since): a
	// hint, never trusted.
	size := int64(len(data)) + int64(s.step%3-1)*int64(s.step)
	return io.NopCloser(&stepReader{r: bytes.NewReader(data), step: s.step}), max(size, 0), nil
}

type stepReader struct {
	r    io.Reader
	step int
}

func (r *stepReader) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), r.step)]) }

// A view through FileOpener answers byte for byte as the view through
// ReadFile, on files of every shape: short and very long lines (one longer
// than the view keeps), multi-byte and invalid UTF-8, CRLF, ranges in and
// past the file, small caps, and images, which it leaves to ReadFile.
func TestFileOpenerViewIsReadFileView(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "word ", "é", "😀", "\xff", "\xe2\x82", "\xf0\x9f", "\r", "\n", "\n", "\n", strings.Repeat("x", 300), strings.Repeat("y", 5000)}
	streamed := 0
	for iter := range 1500 {
		// Most files are read in chunks of 64 bytes, some whole.
		chunk := int64(64)
		if iter%4 == 0 {
			chunk = 1 << 20
		}
		restore := memtool.SetViewChunk(chunk)
		var sb strings.Builder
		for range rng.IntN(200) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		name := "f.md"
		if iter%50 == 0 {
			name = "f.png" // not an image: still answered, by ReadFile
		}
		inner := memstore.New()
		if err := inner.WriteFile(ctx, name, []byte(sb.String()), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		s := &openerStore{Store: inner, step: 1 + rng.IntN(40)}
		in := fmt.Sprintf(`{"command":"view","path":"/memories/%s"}`, name)
		if rng.IntN(2) == 0 {
			a := rng.IntN(60) - 2
			b := -1
			if rng.IntN(3) > 0 {
				b = max(a, 1) + rng.IntN(40) - 3
			}
			in = fmt.Sprintf(`{"command":"view","path":"/memories/%s","view_range":[%d,%d]}`, name, a, b)
		}
		opts := &memtool.Options{MaxViewChars: []int{16000, 1000, 400, 320, 50}[rng.IntN(5)]}
		got := memtool.New(s, opts).Run(ctx, []byte(in))
		restore()
		want := memtool.New(inner, opts).Run(ctx, []byte(in))
		if got != want {
			t.Fatalf("case %d (%s, max %d, %q):\n got %q\nwant %q", iter, in, opts.MaxViewChars, sb.String(), got.Text, want.Text)
		}
		if s.opened.Load() > 0 {
			streamed++
		}
	}
	if streamed < 1000 {
		t.Errorf("only %d of 1500 views went through OpenFile", streamed)
	}
}

// readCountingOpener is a FileOpener over a memory store that counts ReadFile
// calls; with unsupported set, its OpenFile says it cannot open files, as
// a wrapper over a store without FileOpener does.
type readCountingOpener struct {
	memtool.Store
	unsupported bool
	reads       atomic.Int64
}

func (s *readCountingOpener) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	s.reads.Add(1)
	return s.Store.ReadFile(ctx, name, limit)
}

func (s *readCountingOpener) OpenFile(ctx context.Context, name string, limit int64) (io.ReadCloser, int64, error) {
	if s.unsupported {
		return memtool.ForwardOpenFile(ctx, struct{ memtool.Store }{s.Store}, name, limit)
	}
	data, err := s.Store.ReadFile(ctx, name, limit) // not counted
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

// A view whose OpenFile the store refused (a directory, a missing file)
// is answered from Stat without reading the path again, and answers as
// without FileOpener; a store that cannot open files is still read.
func TestViewRefusedOpenIsNotReadAgain(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	if err := inner.Mkdir(ctx, "dir"); err != nil {
		t.Fatal(err)
	}
	if err := inner.WriteFile(ctx, "dir/a.md", []byte("alpha"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	plain := memtool.New(struct{ memtool.Store }{inner}, nil) // no FileOpener
	for _, tc := range []struct {
		path        string
		unsupported bool
		wantReads   int64
	}{
		{"/memories/dir", false, 0},
		{"/memories/missing.md", false, 0},
		{"/memories/dir/a.md", true, 1},
	} {
		s := &readCountingOpener{Store: inner, unsupported: tc.unsupported}
		in := []byte(`{"command":"view","path":"` + tc.path + `"}`)
		got, want := memtool.New(s, nil).Run(ctx, in), plain.Run(ctx, in)
		if got != want {
			t.Errorf("view %s: got %q, want %q", tc.path, got.Text, want.Text)
		}
		if n := s.reads.Load(); n != tc.wantReads {
			t.Errorf("view %s (OpenFile unsupported: %v): %d ReadFile calls, want %d", tc.path, tc.unsupported, n, tc.wantReads)
		}
	}
}
