package memtool_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
)

// callCounter counts a store's Stat and Update calls.
type callCounter struct {
	memtool.Store
	stats, updates atomic.Int64
}

func (s *callCounter) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, name)
}

func (s *callCounter) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	s.updates.Add(1)
	return s.Store.Update(ctx, name, limit, fn)
}

// TestEditRefusalsInOrder: of the refusals an edit can earn at once, the
// one it gets follows the order edit's doc gives (missing, not a file,
// too large to read, the command's own, result too large, not UTF-8),
// whether the store refuses the file from its size or hands it over; and
// an edit that fits is one store call, an Update, without a Stat.
func TestEditRefusalsInOrder(t *testing.T) {
	stores := map[string]func(t *testing.T) memtool.Store{
		"mem": func(*testing.T) memtool.Store { return memstore.New() },
		"file": func(t *testing.T) memtool.Store {
			s, err := filestore.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	const notFile = "Error: The path %s is not a file."
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			inner := open(t)
			for f, text := range map[string]string{
				"small.md": "alpha\n",
				"big.md":   strings.Repeat("b", 100),                  // over MaxReadSize
				"bad.md":   strings.Repeat("c", 49) + "\xff",          // not UTF-8
				"full.md":  strings.Repeat("d", 59) + "\xff" + "\xfe", // not UTF-8, MaxFileSize + 1
			} {
				if err := inner.WriteFile(ctx, f, []byte(text), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
			}
			if err := inner.Mkdir(ctx, "d"); err != nil {
				t.Fatal(err)
			}
			s := &callCounter{Store: inner}
			mem := memtool.New(s, &memtool.Options{MaxReadSize: 64, MaxFileSize: 60})
			run := func(in map[string]any) string {
				b, err := json.Marshal(in)
				if err != nil {
					t.Fatal(err)
				}
				return mem.Run(ctx, b).Text
			}
			replace := func(p, old, new string) map[string]any {
				return map[string]any{"command": "str_replace", "path": p, "old_str": old, "new_str": new}
			}
			insert := func(p string, line int, text string) map[string]any {
				return map[string]any{"command": "insert", "path": p, "insert_line": line, "insert_text": text}
			}
			for _, c := range []struct {
				in    map[string]any
				want  string
				stats int64 // Stat calls, and one Update each but where said
			}{
				{replace("/memories/nope.md", "", "x"), "Error: The path /memories/nope.md does not exist. Please provide a valid path.", 0},
				// No file is small enough for this insert: no Update, a Stat.
				{insert("/memories/nope/", 0, strings.Repeat("x", 99)), "Error: The path /memories/nope/ does not exist. Please provide a valid path.", 1},
				{replace("/memories/small.md/", "alpha", "x"), strings.Replace(notFile, "%s", "/memories/small.md/", 1), 0},
				{replace("/memories/d", "", "x"), strings.Replace(notFile, "%s", "/memories/d", 1), 0},
				{insert("/memories/d/", 0, "x"), strings.Replace(notFile, "%s", "/memories/d/", 1), 0},
				{replace("/memories/big.md/", "", "x"), strings.Replace(notFile, "%s", "/memories/big.md/", 1), 1},
				{replace("/memories/big.md", "", "x"), "Error: File /memories/big.md is too large to read: 100 bytes, more than the limit of 64 bytes", 1},
				{insert("/memories/big.md", 0, "x"), "Error: File /memories/big.md is too large to read: 100 bytes, more than the limit of 64 bytes", 1},
				{replace("/memories/bad.md", "", "x"), "Error: No replacement was performed: `old_str` is empty. Give the exact text to replace.", 0},
				{replace("/memories/full.md", "", "x"), "Error: No replacement was performed: `old_str` is empty. Give the exact text to replace.", 1},
				{insert("/memories/bad.md", 0, strings.Repeat("x", 10)), "Error: File content is too large: 61 bytes, more than the limit of 60 bytes. Nothing was written.", 1},
				{replace("/memories/bad.md", "c", strings.Repeat("x", 12)), "Error: File content is too large: 61 bytes, more than the limit of 60 bytes. Nothing was written.", 1},
				{replace("/memories/bad.md", "cc", ""), "Error: The file /memories/bad.md is not valid UTF-8 text, so it cannot be edited without corrupting it. Nothing was changed.", 0},
				{replace("/memories/full.md", "dd", ""), "Error: The file /memories/full.md is not valid UTF-8 text, so it cannot be edited without corrupting it. Nothing was changed.", 0},
				{insert("/memories/small.md", 9, "x"), "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 2]", 0},
				{replace("/memories/small.md", "alpha", "beta"), "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tbeta\n     2\t", 0},
				{insert("/memories/small.md", 1, "gamma\n"), "The file /memories/small.md has been edited.", 0},
			} {
				s.stats.Store(0)
				s.updates.Store(0)
				got := run(c.in)
				if got != c.want {
					t.Errorf("%v:\n got %q\nwant %q", c.in, got, c.want)
				}
				wantUpdates := int64(1)
				if c.in["command"] == "insert" && len(c.in["insert_text"].(string)) > 60 {
					wantUpdates = 0
				}
				if st, up := s.stats.Load(), s.updates.Load(); st != c.stats || up != wantUpdates {
					t.Errorf("%v: %d Stat and %d Update calls, want %d and %d", c.in, st, up, c.stats, wantUpdates)
				}
			}
			if got, err := inner.ReadFile(ctx, "small.md", 100); err != nil || string(got) != "beta\ngamma\n" {
				t.Errorf("small.md = %q, %v; want the two edits", got, err)
			}
		})
	}
}
