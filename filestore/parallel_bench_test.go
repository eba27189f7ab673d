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
			return flipFirstByte(ctx, s, name)
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

// BenchmarkPinnedReplace puts the Updates of BenchmarkParallelWrites to
// two stores side by side in one loop: one that pins the file a replace
// replaces, releasing it after the write lock (the default), and one that
// does not (NoPin), whose renames free the old file's blocks under the
// lock. Each loop makes one round of N Updates one after another and one
// of N at once on each store, the order alternating, and it reports the
// ratios of the pinned store's times to the other's.
//
//	go test ./filestore -run '^$' -bench PinnedReplace -benchtime 20x -count 3
func BenchmarkPinnedReplace(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("writers=%d", n), func(b *testing.B) {
			stores := [2]*filestore.Store{benchStore(b), benchStore(b)}
			filestore.NoPin(stores[1])
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("f%02d.txt", i)
				for _, s := range stores {
					if err := s.WriteFile(ctx, names[i], benchData(), memtool.CreateOnly); err != nil {
						b.Fatal(err)
					}
				}
			}
			var seq, par [2]time.Duration
			round := 0
			for b.Loop() {
				for k := range 2 {
					j := (k + round) % 2
					s := stores[j]
					t0 := time.Now()
					for i := range n {
						if err := flipFirstByte(ctx, s, names[i]); err != nil {
							b.Error(err)
						}
					}
					t1 := time.Now()
					var wg sync.WaitGroup
					for i := range n {
						wg.Go(func() {
							if err := flipFirstByte(ctx, s, names[i]); err != nil {
								b.Error(err)
							}
						})
					}
					wg.Wait()
					seq[j] += t1.Sub(t0)
					par[j] += time.Since(t1)
				}
				round++
			}
			writes := float64(b.N * n)
			b.ReportMetric(float64(seq[0].Nanoseconds())/writes, "pinned-seq-ns/write")
			b.ReportMetric(float64(seq[1].Nanoseconds())/writes, "unpinned-seq-ns/write")
			b.ReportMetric(float64(par[0].Nanoseconds())/writes, "pinned-par-ns/write")
			b.ReportMetric(float64(par[1].Nanoseconds())/writes, "unpinned-par-ns/write")
			b.ReportMetric(float64(seq[0])/float64(seq[1]), "seq-pinned/unpinned")
			b.ReportMetric(float64(par[0])/float64(par[1]), "par-pinned/unpinned")
		})
	}
}

// flipFirstByte is an Update that changes the file's first byte.
func flipFirstByte(ctx context.Context, s *filestore.Store, name string) error {
	return s.Update(ctx, name, memtool.DefaultMaxReadSize, func(old []byte) ([]byte, error) {
		next := append([]byte(nil), old...)
		next[0] ^= 1
		return next, nil
	})
}
