package memtool

import (
	"context"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
)

// oneFileStore is a memory of one file, big.md.
type oneFileStore struct {
	Store // nil: only the reads below are called
	data  []byte
}

func (s oneFileStore) Stat(ctx context.Context, name string) (FileInfo, error) {
	if name == "" {
		return FileInfo{Type: fs.ModeDir}, nil
	}
	return FileInfo{Name: name, Size: int64(len(s.data))}, nil
}

func (s oneFileStore) ReadDir(ctx context.Context, name string) ([]FileInfo, error) {
	return []FileInfo{{Name: "big.md", Size: int64(len(s.data))}}, nil
}

func (s oneFileStore) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return s.data, nil
}

// A search whose context ends while it matches the lines of a file
// stops there: a costly regular expression on a large file would
// otherwise run on past the call's deadline, one file at a time.
func TestSearchStopsInFile(t *testing.T) {
	const lines = 100000
	s := oneFileStore{data: []byte(strings.Repeat("a line of text\n", lines))}
	for _, path := range []string{"", "big.md"} {
		sr, err := newSearch(SearchQuery{Query: "text"}, DefaultMaxReadSize)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var n atomic.Int64
		match := sr.match
		sr.match = func(line string) bool {
			if n.Add(1) == 10 {
				cancel() // the deadline passes
			}
			return match(line)
		}
		if path == "" {
			err = sr.scan(ctx, s, path)
		} else {
			err = sr.one(ctx, s, path)
		}
		cancel()
		if err == nil {
			t.Errorf("search of %q: no error after its context ended", path)
		}
		if got := n.Load(); got > 1000 {
			t.Errorf("search of %q: %d of %d lines matched after its context ended at the 10th", path, got, lines)
		}
	}
}
