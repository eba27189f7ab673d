package storetest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image"
	"image/png"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// searchReadLimit is the read limit of the search battery: the file
// "big.txt" is larger.
const searchReadLimit = 4096

// searchTree is the battery's memory. Its files are text at the start and
// end of lines and files, with and without a final newline, in unicode
// (ß, final sigma, the Kelvin sign and the long s, which fold to ASCII),
// with regex meta-characters; and files a search must skip: hidden
// entries, node_modules, an image, a binary file and one over the read
// limit.
func searchTree() tree {
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		panic(err)
	}
	return tree{
		"notes":              "dir",
		"notes/a.md":         "file:Alpha beta\nGAMMA delta\nlast line, no newline",
		"notes/b.md":         "file:first line\n\nmiddle line\nlast line\n",
		"notes/sub":          "dir",
		"notes/sub/deep.txt": "file:Ünïcödé straße\nΣίσυφος\nKelvin \u212a sign\nlong \u017f s\n",
		"notes/.dot.md":      "file:alpha in a hidden file\n",
		"notes2":             "dir",
		"notes2/x.md":        "file:alpha next door\n",
		"meta.txt":           "file:a+b (c) [d] * ? ^$ . \\ | {2}\nalpha.beta\nalphaXbeta\n",
		"empty.txt":          "file:",
		"invalid.txt":        "file:caf\xe9 alpha\n",
		"image.png":          "file:" + img.String(),
		"binary.dat":         "file:alpha\x00beta\n",
		"big.txt":            "file:alpha\n" + strings.Repeat("x", searchReadLimit),
		".hidden":            "dir",
		".hidden/secret.md":  "file:alpha secret\n",
		"node_modules":       "dir",
		"node_modules/m.js":  "file:alpha module\n",
	}
}

// searchSkipped are the battery's files a search never reads, but for
// a hidden one named by the search's path.
var searchSkipped = []string{"image.png", "binary.dat", "big.txt"}

// searchQueries is the battery.
var searchQueries = []memtool.SearchQuery{
	{Query: "alpha"},
	{Query: "ALPHA"},
	{Query: "alpha", CaseSensitive: true},
	{Query: "Alpha", CaseSensitive: true},
	{Query: "GAMMA", CaseSensitive: true},
	{Query: "gamma", CaseSensitive: true},
	{Query: "line"},
	{Query: "^last", Regex: true},
	{Query: "line$", Regex: true},
	{Query: "^$", Regex: true},
	{Query: "newline$", Regex: true},
	{Query: "^Alpha beta$", Regex: true, CaseSensitive: true},
	{Query: "(?i)ALPHA", Regex: true, CaseSensitive: true},
	{Query: "alpha.beta"},
	{Query: "alpha.beta", Regex: true},
	{Query: "a+b"},
	{Query: "(c)"},
	{Query: "[d]"},
	{Query: "^$"},
	{Query: "\\"},
	{Query: "."},
	{Query: "{2}"},
	{Query: "| {2}"},
	{Query: "[0-9]+|gamma", Regex: true},
	{Query: "straße"},
	{Query: "STRASSE"},
	{Query: "ΣΊΣΥΦΟΣ"},
	{Query: "σίσυφος", CaseSensitive: true},
	{Query: "kelvin k sign"},
	{Query: "LONG S S"},
	{Query: "caf\uFFFD"},
	{Query: "alpha", Path: "/memories/notes"},
	{Query: "line", Path: "/memories/notes/"},
	{Query: "line", Path: "/memories/notes/a.md"},
	{Query: "alpha", Path: "/memories/.hidden"},
	{Query: "alpha", Path: "/memories/notes/.dot.md"},
	{Query: "alpha", Path: "/memories/notes/sub"},
	{Query: "alpha", Path: "/memories/notes/../notes2"},
	{Query: "line", Limit: 2},
	{Query: "e", Limit: 1},
	{Query: "nothing matches this"},
}

// RunSearch runs the search conformance suite: memtool.Search on a store
// that newStore returns new and empty finds, for a battery of queries, the
// lines a plain reading of the files finds, whether the store has an
// index (memtool.Searcher) or is scanned, also after every kind of change.
func RunSearch(t *testing.T, newStore func(t *testing.T) memtool.Store) {
	t.Helper()
	t.Run("Battery", func(t *testing.T) {
		s := newStore(t)
		files := makeTree(t, s, searchTree())
		for _, q := range searchQueries {
			checkSearch(t, s, q, searchOracle(t, files, q))
		}
	})
	t.Run("Refusals", func(t *testing.T) {
		s := newStore(t)
		makeTree(t, s, searchTree())
		testSearchRefusals(t, s)
	})
	t.Run("AfterChanges", func(t *testing.T) {
		s := newStore(t)
		testSearchAfterChanges(t, s)
	})
	t.Run("OwnEntries", func(t *testing.T) {
		s := newStore(t)
		if !memtool.Has[memtool.Searcher](s) {
			t.Skipf("%T has no search index", s)
		}
		testSearchOwnEntries(t, s)
	})
	t.Run("Tenants", func(t *testing.T) {
		s := newStore(t)
		if !memtool.Has[memtool.Tenanted](s) {
			t.Skipf("%T holds no tenants", s)
		}
		testSearchTenants(t, s.(memtool.Tenanted))
	})
}

// checkSearch checks that q on s finds want.
func checkSearch(t *testing.T, s memtool.Store, q memtool.SearchQuery, want memtool.SearchResult) {
	t.Helper()
	got, err := memtool.Search(t.Context(), s, q, searchReadLimit)
	if err != nil {
		t.Errorf("Search(%+v): %v", q, err)
		return
	}
	if !equalResults(got, want) {
		t.Errorf("Search(%+v):\n got %s\nwant %s", q, formatResult(got), formatResult(want))
	}
}

func equalResults(a, b memtool.SearchResult) bool {
	return a.Total == b.Total && slices.Equal(a.Matches, b.Matches)
}

func formatResult(r memtool.SearchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d in all", r.Total)
	for _, m := range r.Matches {
		fmt.Fprintf(&b, "\n\t%s:%d:%q", m.Path, m.Line, m.Text)
	}
	return b.String()
}

// searchOracle is what q finds in files (a tree) read plainly: every
// line of every file under q.Path that is not skipped, matched with a
// regexp as it stands.
func searchOracle(t *testing.T, files tree, q memtool.SearchQuery) memtool.SearchResult {
	t.Helper()
	expr := q.Query
	if !q.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !q.CaseSensitive {
		expr = "(?i)" + expr
	}
	re := regexp.MustCompile(expr)
	base, _, err := memtool.CleanPath(cmp.Or(q.Path, memtool.Root))
	if err != nil {
		t.Fatal(err)
	}
	var all []memtool.SearchMatch
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data, ok := strings.CutPrefix(files[name], "file:")
		if !ok || slices.Contains(searchSkipped, name) {
			continue
		}
		rel, below := strings.CutPrefix(name, base+"/")
		switch {
		case base == "":
			rel, below = name, true
		case name == base:
			rel, below = "", true
		}
		if !below || hiddenIn(rel) {
			continue
		}
		for i, line := range strings.Split(data, "\n") {
			line = strings.ToValidUTF8(line, "\uFFFD")
			if re.MatchString(line) {
				all = append(all, memtool.SearchMatch{Path: memtool.VirtualPath(name), Line: i + 1, Text: line})
			}
		}
	}
	limit := cmp.Or(q.Limit, memtool.DefaultSearchLimit)
	return memtool.SearchResult{Matches: all[:min(limit, len(all))], Total: len(all)}
}

// hiddenIn reports whether a relative name holds a component that
// listings hide.
func hiddenIn(rel string) bool {
	for c := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(c, ".") || c == "node_modules" {
			return true
		}
	}
	return false
}

func testSearchRefusals(t *testing.T, s memtool.Store) {
	for _, q := range []memtool.SearchQuery{
		{Query: ""},
		{Query: strings.Repeat("a", memtool.MaxSearchQuery+1)},
		{Query: "a\xffb"},
		{Query: "(unclosed", Regex: true},
		{Query: "a{1001}", Regex: true},
		{Query: "a", Limit: -1},
		{Query: "a", Limit: memtool.MaxSearchLimit + 1},
		{Query: "a", Path: "/etc"},
		{Query: "a", Path: "/memories/../etc"},
		{Query: "a", Path: "/memories/missing"},
		{Query: "a", Path: "/memories/notes/a.md/"},
	} {
		_, err := memtool.Search(t.Context(), s, q, searchReadLimit)
		var se *memtool.SearchError
		if !errors.As(err, &se) || se.Reason == "" {
			t.Errorf("Search(%.60q, regex %v, path %q, limit %d): %v, want a *memtool.SearchError", q.Query, q.Regex, q.Path, q.Limit, err)
		}
	}
}

// testSearchAfterChanges checks the battery after each kind of change a
// store makes: an index must follow every one.
func testSearchAfterChanges(t *testing.T, s memtool.Store) {
	ctx := t.Context()
	files := makeTree(t, s, searchTree())
	check := func(step string) {
		t.Helper()
		for _, q := range searchQueries {
			if q.Path != "" && !strings.HasPrefix(q.Path, "/memories/notes") {
				continue
			}
			q.Path = strings.Replace(q.Path, "/../notes2", "", 1)
			want := searchOracle(t, files, q)
			got, err := memtool.Search(ctx, s, q, searchReadLimit)
			if errors.As(err, new(*memtool.SearchError)) {
				continue // the path is gone after this step
			}
			if err != nil || !equalResults(got, want) {
				t.Errorf("after %s: Search(%+v): %v\n got %s\nwant %s", step, q, err, formatResult(got), formatResult(want))
			}
		}
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"replacing a file", func() error {
			files["notes/a.md"] = "file:Alpha replaced\nno gamma now"
			return s.WriteFile(ctx, "notes/a.md", []byte("Alpha replaced\nno gamma now"), memtool.Replace)
		}},
		{"updating a file", func() error {
			files["notes/b.md"] = "file:first line\nalpha added\n"
			return s.Update(ctx, "notes/b.md", noLimit, func([]byte) ([]byte, error) { return []byte("first line\nalpha added\n"), nil })
		}},
		{"creating a file", func() error {
			files["notes/sub/new.md"] = "file:a new line with alpha\n"
			return s.WriteFile(ctx, "notes/sub/new.md", []byte("a new line with alpha\n"), memtool.CreateOnly)
		}},
		{"renaming a file", func() error {
			files["notes/renamed.md"] = files["notes/sub/new.md"]
			delete(files, "notes/sub/new.md")
			return memtool.Move(ctx, s, "notes/sub/new.md", "notes/renamed.md", noLimit)
		}},
		{"renaming a directory", func() error {
			for name, v := range maps.Clone(files) {
				if rest, ok := strings.CutPrefix(name, "notes/sub"); ok {
					files["notes/moved"+rest] = v
					delete(files, name)
				}
			}
			return memtool.Move(ctx, s, "notes/sub", "notes/moved", noLimit)
		}},
		{"removing a file", func() error {
			delete(files, "notes/renamed.md")
			return s.Remove(ctx, "notes/renamed.md")
		}},
		{"removing a tree", func() error {
			for name := range maps.Clone(files) {
				if strings.HasPrefix(name, "notes/moved") {
					delete(files, name)
				}
			}
			return memtool.RemoveAll(ctx, s, "notes/moved")
		}},
		{"removing everything", func() error {
			for name := range maps.Clone(files) {
				if strings.HasPrefix(name, "notes/") {
					delete(files, name)
				}
			}
			files["notes"] = "dir"
			if err := memtool.RemoveAll(ctx, s, "notes"); err != nil {
				return err
			}
			return s.Mkdir(ctx, "notes")
		}},
	}
	check("making the tree")
	for _, st := range steps {
		if err := st.fn(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		check(st.name)
	}
}
