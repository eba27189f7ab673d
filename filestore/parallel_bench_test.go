package filestore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// BenchmarkParallelWrites puts N writes to N different files, all at once
// (one goroutine each, as one turn's tool calls run), next to the same N
// writes one after another, in one loop that alternates the two, and
// reports the ratio of their times (parallel/sequential); the store and
// the files are the same for both. Each write changes its file (a 4 KiB
// Update that flips a byte, or a WriteFile that replaces it).
//
//	go test ./filestore -run '^$' -bench ParallelWrites -benchtime 20x -count 3
func BenchmarkParallelWrites(b *testing.B) {
	ctx := context.Background()
	ops := map[string]func(s *filestore.Store, name string, data []byte) error{
		"Update": func(s *filestore.Store, name string, data []byte) error {
			return s.Update(ctx, name, memtool.DefaultMaxReadSize, func(old []byte) ([]byte, error) {
				next := append([]byte(nil), old...)
				next[0] ^= 1
				return next, nil
			})
		},
		"WriteFile": func(s *filestore.Store, name string, data []byte) error {
			data[0] ^= 1
			return s.WriteFile(ctx, name, data, memtool.Replace)
		},
	}
	for _, op := range []string{"Update", "WriteFile"} {
		for _, n := range []int{8, 64} {
			b.Run(fmt.Sprintf("op=%s/writers=%d", op, n), func(b *testing.B) {
				s := benchStore(b)
				names := make([]string, n)
				datas := make([][]byte, n)
				for i := range names {
					names[i] = fmt.Sprintf("f%02d.txt", i)
					datas[i] = benchData()
					if err := s.WriteFile(ctx, names[i], datas[i], memtool.CreateOnly); err != nil {
						b.Fatal(err)
					}
				}
				write := func(i int) {
					if err := ops[op](s, names[i], datas[i]); err != nil {
						b.Error(err)
					}
				}
				var seq, par time.Duration
				for b.Loop() {
					t0 := time.Now()
					for i := range n {
						write(i)
					}
					t1 := time.Now()
					var wg sync.WaitGroup
					for i := range n {
						wg.Go(func() { write(i) })
					}
					wg.Wait()
					seq += t1.Sub(t0)
					par += time.Since(t1)
				}
				b.ReportMetric(float64(seq.Nanoseconds())/float64(b.N*n), "seq-ns/write")
				b.ReportMetric(float64(par.Nanoseconds())/float64(b.N*n), "par-ns/write")
				b.ReportMetric(float64(par)/float64(seq), "par/seq")
			})
		}
	}
}
