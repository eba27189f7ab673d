package memtool_test

import (
	"context"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// racedStat is a store where another process creates the file at name
// right after the first Stat of it found nothing.
type racedStat struct {
	memtool.Store
	name string
	once sync.Once
}

func (s *racedStat) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	fi, err := s.Store.Stat(ctx, name)
	if name == s.name && err != nil {
		s.once.Do(func() { s.Store.WriteFile(ctx, name, []byte("the other create"), memtool.CreateOnly) })
	}
	return fi, err
}

// With Overwrite, a create that finds its name taken between its look and
// its write (another create won the race) overwrites it, as it would have
// a moment later: "already exists" would be false for a create that
// replaces files.
func TestOverwritingCreateRacingACreate(t *testing.T) {
	st := &racedStat{Store: memstore.New(), name: "a.md"}
	mem := memtool.New(st, &memtool.Options{Overwrite: true})
	r := mem.Run(context.Background(), []byte(`{"command":"create","path":"/memories/a.md","file_text":"mine"}`))
	data, err := st.Store.ReadFile(context.Background(), "a.md", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || string(data) != "mine" {
		t.Errorf("create racing another: %+v, file %q; want it created over the other", r, data)
	}
}
