package memtool

import (
	"context"
	"fmt"
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

// manyFileStore is a memory of n files, f000.md and on, each data.
type manyFileStore struct {
	Store // nil: only the reads below are called
	n     int
	data  []byte
}

func (s manyFileStore) Stat(ctx context.Context, name string) (FileInfo, error) {
	return FileInfo{Type: fs.ModeDir}, nil
}

func (s manyFileStore) ReadDir(ctx context.Context, name string) ([]FileInfo, error) {
	var infos []FileInfo
	for i := range s.n {
		infos = append(infos, FileInfo{Name: fmt.Sprintf("f%03d.md", i), Size: int64(len(s.data))})
	}
	return infos, nil
}

func (s manyFileStore) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	return s.data, nil
}

// A search keeps the first Limit matching lines and counts the others,
// rather than hold every matching line of the memory until it ends: a
// query that every line matches would hold a copy of the whole memory.
func TestSearchKeepsLimit(t *testing.T) {
	const files, lines, limit = 50, 1000, 10
	s := manyFileStore{n: files, data: []byte(strings.Repeat("a line of text\n", lines))}
	sr, err := newSearch(SearchQuery{Query: "text", Limit: limit}, DefaultMaxReadSize)
	if err != nil {
		t.Fatal(err)
	}
	if err := sr.scan(t.Context(), s, ""); err != nil {
		t.Fatal(err)
	}
	if held := len(sr.matches); held > 2*limit {
		t.Errorf("the search held %d matching lines, for a limit of %d", held, limit)
	}
	res := sr.result()
	if res.Total != files*lines || len(res.Matches) != limit {
		t.Fatalf("got %d of %d lines, want %d of %d", len(res.Matches), res.Total, limit, files*lines)
	}
	for i, m := range res.Matches {
		if want := (SearchMatch{Path: "/memories/f000.md", Line: i + 1, Text: "a line of text"}); m != want {
			t.Errorf("match %d: got %+v, want %+v", i, m, want)
		}
	}
}
