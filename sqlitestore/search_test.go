package sqlitestore_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

func TestSearch(t *testing.T) {
	storetest.RunSearch(t, func(t *testing.T) memtool.Store {
		return open(t, filepath.Join(t.TempDir(), "m.db"))
	})
}

// The index finds the files that hold the terms, and only them (in any
// case: the caller checks the case).
func TestSearchFilesUsesIndex(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "m.db"))
	ctx := t.Context()
	for name, text := range map[string]string{"a.md": "the Quokka smiles", "b.md": "a wombat", "c.md": "QUOKKAS and wombats"} {
		if err := s.WriteFile(ctx, name, []byte(text), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := s.SearchFiles(ctx, "", memtool.IndexQuery{Terms: []string{"quokka"}, FoldCase: true, Limit: 1 << 20}, func(name string, data []byte) error {
		got = append(got, name)
		return nil
	})
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"a.md", "c.md"}) {
		t.Errorf("SearchFiles(quokka): %v, %v; want a.md and c.md", got, err)
	}
}
