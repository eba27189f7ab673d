package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
)

func TestExpInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "m.db"))
	for i := range 70 {
		data := []byte("xyz filler")
		if i == 0 {
			data = []byte("line abé\xa9 tail\n")
		}
		if err := s.WriteFile(ctx, fmt.Sprintf("f%02d", i), data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := s.SearchFiles(ctx, "", memtool.IndexQuery{Terms: []string{"abé"}, Limit: 1 << 20}, func(name string, data []byte) error {
		got = append(got, name)
		return nil
	})
	t.Logf("got %v err %v", got, err)
}
