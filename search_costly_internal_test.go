package memtool

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// endsWhenLookedAt is a context that ends the first time its Err is
// called: a deadline that passes as soon as the search looks.
type endsWhenLookedAt struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func (c *endsWhenLookedAt) Done() <-chan struct{} { return c.done }

func (c *endsWhenLookedAt) Err() error {
	c.once.Do(func() { close(c.done) })
	return context.Canceled
}

// A search whose context ends while it matches a short line with a costly
// regular expression stops in that line, not at its end: a query of
// 1,000 bytes can cost 100,000 steps a character, seconds for a line of
// 4 KiB, and a file of such lines ran on past the search's deadline for
// as long as one line took. Without the context ending, the line matches.
func TestSearchStopsInCostlyShortLine(t *testing.T) {
	s := oneFileStore{data: []byte(strings.Repeat("ab", 250) + "z")}
	q := SearchQuery{Query: `(?:a|b?){1000}z`, Regex: true}

	sr, err := newSearch(q, DefaultMaxReadSize)
	if err != nil {
		t.Fatal(err)
	}
	if err := sr.one(t.Context(), s, "big.md"); err != nil || sr.total != 1 {
		t.Fatalf("search with time left: %d lines, %v; want the line", sr.total, err)
	}

	sr, err = newSearch(q, DefaultMaxReadSize)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &endsWhenLookedAt{Context: t.Context(), done: make(chan struct{})}
	err = sr.one(ctx, s, "big.md")
	if err == nil || sr.total != 0 {
		t.Errorf("search whose context ended in the line: %d lines, %v; want it stopped in the line", sr.total, err)
	}
}
