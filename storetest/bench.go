package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memtool/memtool"
)

// BenchmarkEdit measures a str_replace in a file of text (after a first
// line "MARK0") through memtool.Memory, on a store from newStore alone
// (sub-benchmark "plain") and wrapped by wrap (sub-benchmark name), so a
// wrapper's cost is the difference. The edits toggle MARK0 and MARK1, so
// the file keeps its size.
func BenchmarkEdit(b *testing.B, newStore func() memtool.Store, text []byte, name string, wrap func(b *testing.B, s memtool.Store) memtool.Store) {
	for _, wrapped := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: name}[wrapped], func(b *testing.B) {
			s := newStore()
			if wrapped {
				s = wrap(b, s)
			}
			mem := memtool.New(s, nil)
			ctx := context.Background()
			in := func(m map[string]any) []byte { j, _ := json.Marshal(m); return j }
			if r := mem.Run(ctx, in(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "MARK0\n" + string(text)})); r.IsError {
				b.Fatal(r.Text)
			}
			edits := [2][]byte{
				in(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "MARK0", "new_str": "MARK1"}),
				in(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "MARK1", "new_str": "MARK0"}),
			}
			for i := 0; b.Loop(); i++ {
				if r := mem.Run(ctx, edits[i%2]); r.IsError {
					b.Fatal(r.Text)
				}
			}
		})
	}
}
