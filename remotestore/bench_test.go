package remotestore_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// BenchmarkEdit: a str_replace in a 4 KiB file through Memory on a
// memstore ("plain") and on a remote store over loopback HTTP to a server
// on a memstore ("remote"): the difference is the cost of the API (a GET
// and a PUT with If-Match per edit).
func BenchmarkEdit(b *testing.B) {
	storetest.BenchmarkEdit(b, func() memtool.Store { return memstore.New() }, []byte(strings.Repeat("abcdefghijklmno\n", 256)), "remote",
		func(b *testing.B, s memtool.Store) memtool.Store { return serve(b, s) })
}

// BenchmarkReadParallel: ReadFile of a 4 KiB file from many goroutines
// over loopback HTTP.
func BenchmarkReadParallel(b *testing.B) {
	inner := memstore.New()
	inner.WriteFile(b.Context(), "f", []byte(strings.Repeat("abcdefghijklmno\n", 256)), memtool.CreateOnly)
	s := serve(b, inner)
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.ReadFile(b.Context(), "f", 1<<20); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
