package filestore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// These benchmarks put the cost of a durable store write next to the least a
// durable write can cost, so that the store's overhead can be read off:
//
//	go test ./filestore -run '^$' -bench . -count 5
//
// BenchmarkBareWrite is that least: a plain loop of write temp file, fsync,
// rename over the target, fsync directory, with the directory kept open.
// BenchmarkWriteFile and BenchmarkUpdate do the same write through the
// store, which adds its locks (mutex and flock), the path checks of
// os.Root, opening the parent, a random temp name and (Update) reading the
// old content. All three work on the same kind of directory (b.TempDir).

const benchSize = 4 << 10

func benchData() []byte {
	line := []byte("The user prefers concise answers; keep notes short.\n") // 52 bytes
	return bytes.Repeat(line, benchSize/len(line)+1)[:benchSize]
}

// bareWriter is the least a durable replace of one file can do.
type bareWriter struct {
	d           *os.File // the directory, kept open
	tmp, target string
}

func newBareWriter(b *testing.B) *bareWriter {
	dir := b.TempDir()
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return &bareWriter{d: d, tmp: filepath.Join(dir, "tmp"), target: filepath.Join(dir, "f.txt")}
}

func (w *bareWriter) write(b *testing.B, data []byte) {
	f, err := os.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(w.tmp, w.target); err != nil {
		b.Fatal(err)
	}
	if err := w.d.Sync(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkBareWrite(b *testing.B) {
	w := newBareWriter(b)
	data := benchData()
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		w.write(b, data)
	}
}

func benchStore(b *testing.B) *filestore.Store {
	s, err := filestore.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkWriteFile(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	data := benchData()
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.WriteFile(ctx, "f.txt", data, memtool.Replace); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	data := benchData()
	if err := s.WriteFile(ctx, "f.txt", data, memtool.CreateOnly); err != nil {
		b.Fatal(err)
	}
	// Each update flips one byte, so every write really changes the file.
	next := bytes.Clone(data)
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		err := s.Update(ctx, "f.txt", memtool.DefaultMaxReadSize, func(old []byte) ([]byte, error) {
			copy(next, old)
			next[0] ^= 1
			return next, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPairedWithBare alternates a bare durable write and one through
// the store, in two directories of the same file system, and reports the
// ratio of their times (store/bare). fsync latency drifts a lot on shared
// machines; pairing each store write with a bare one cancels most of the
// drift that separate benchmarks pick up.
func BenchmarkPairedWithBare(b *testing.B) {
	ctx := context.Background()
	data := benchData()
	ops := map[string]func(s *filestore.Store) error{
		"WriteFile": func(s *filestore.Store) error {
			return s.WriteFile(ctx, "f.txt", data, memtool.Replace)
		},
		"Update": func(s *filestore.Store) error {
			// A new byte each time: an Update that returns what it read
			// writes nothing.
			return s.Update(ctx, "f.txt", memtool.DefaultMaxReadSize, func(old []byte) ([]byte, error) {
				next := bytes.Clone(old)
				next[0] ^= 1
				return next, nil
			})
		},
	}
	for _, name := range []string{"WriteFile", "Update"} {
		b.Run("op="+name, func(b *testing.B) {
			w, s := newBareWriter(b), benchStore(b)
			if err := s.WriteFile(ctx, "f.txt", data, memtool.CreateOnly); err != nil {
				b.Fatal(err)
			}
			var bare, store time.Duration
			for b.Loop() {
				t0 := time.Now()
				w.write(b, data)
				t1 := time.Now()
				if err := ops[name](s); err != nil {
					b.Fatal(err)
				}
				bare += t1.Sub(t0)
				store += time.Since(t1)
			}
			b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-ns/op")
			b.ReportMetric(float64(store.Nanoseconds())/float64(b.N), "store-ns/op")
			b.ReportMetric(float64(store)/float64(bare), "store/bare")
		})
	}
}
