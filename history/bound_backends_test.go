package history_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
)

// The bound holds over every backend, which each report the sizes that
// the count adds up (a backend that listed no sizes would leave it
// unbounded), and the usage counter is never taken for a file's
// versions: a hostile loop of create, edit, delete under new names stays
// within MaxBytes, the newest version of the last file stays, and the
// live file is whole.
func TestMaxBytesOnEveryBackend(t *testing.T) {
	for _, b := range backendtest.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			inner := b.Open(t)
			s := history.New(inner, &history.Options{MaxBytes: 3000})
			for i := range 12 {
				name := fmt.Sprintf("f%d.md", i)
				for j, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace, memtool.Replace} {
					if err := s.WriteFile(ctx, name, []byte(strings.Repeat(fmt.Sprint(j), 400)), mode); err != nil {
						t.Fatal(err)
					}
				}
				if i < 11 {
					if err := s.Remove(ctx, name); err != nil {
						t.Fatal(err)
					}
				}
			}
			if total := versionTotal(t, inner); total > 3000 {
				t.Errorf("the versions hold %d bytes, over MaxBytes 3000", total)
			}
			vs, err := history.Versions(ctx, inner, "/memories/f11.md")
			if err != nil || len(vs) != 2 || vs[1].Size != 400 {
				t.Errorf("versions of the last file: %+v, %v; want two of 400 bytes", vs, err)
			}
			if got, err := s.ReadFile(ctx, "f11.md", 1<<20); err != nil || string(got) != strings.Repeat("2", 400) {
				t.Errorf("live file: %.10q…, %v", got, err)
			}
		})
	}
}
