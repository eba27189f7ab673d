package memtool_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
)

// A file of more lines than view shows (999,999) is not searched, as
// docs/search.md says, by the index and by a scan alike; one of 999,999
// lines is, and its last line is numbered as view numbers it.
func TestSearchSkipsFilesOverMaxLines(t *testing.T) {
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	// 999,998 newlines: 999,999 lines; one more newline: 1,000,000.
	ok := "zebra\n" + strings.Repeat("\n", memtool.MaxLines-2) + "zebra tail"
	over := "zebra\n" + strings.Repeat("\n", memtool.MaxLines-1) + "zebra tail"
	for name, text := range map[string]string{"ok.md": ok, "over.md": over} {
		if err := s.WriteFile(ctx, name, []byte(text), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []memtool.Store{s, searchNoIndex{s}} {
		for _, p := range []string{"", "/memories/over.md"} {
			res, err := memtool.Search(ctx, st, memtool.SearchQuery{Query: "zebra", Path: p}, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := []memtool.SearchMatch{{Path: "/memories/ok.md", Line: 1, Text: "zebra"}, {Path: "/memories/ok.md", Line: memtool.MaxLines, Text: "zebra tail"}}
			if p != "" {
				want = nil
			}
			if len(res.Matches) != len(want) || res.Total != len(want) || (len(want) > 0 && (res.Matches[0] != want[0] || res.Matches[1] != want[1])) {
				t.Errorf("search of %q in %T: %+v, want %+v", p, st, res, want)
			}
		}
	}
}
