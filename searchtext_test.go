package memtool_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
)

// The model's answer to a search is never longer than the view limit it
// is cut at, whatever the lengths of the paths, lines and unreadable
// files' names, and says how many lines it shows when it cuts.
func TestSearchTextFits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		maxChars := []int{16000, 4000, 2000}[rng.IntN(3)]
		var res memtool.SearchResult
		for i := range rng.IntN(200) {
			p := "/memories/" + strings.Repeat("é", rng.IntN(300)) + fmt.Sprint(i)
			res.Matches = append(res.Matches, memtool.SearchMatch{Path: p, Line: 1 + rng.IntN(999999), Text: strings.Repeat("ab𝔸", rng.IntN(400))})
		}
		res.Total = len(res.Matches) + rng.IntN(3)*rng.IntN(100000)
		if rng.IntN(2) == 0 {
			res.Unreadable = 1 + rng.IntN(1000)
			for i := range min(res.Unreadable, memtool.MaxUnreadablePaths) {
				res.UnreadablePaths = append(res.UnreadablePaths, "/memories/"+strings.Repeat("u", rng.IntN(1000))+fmt.Sprint(i))
			}
		}
		text := memtool.SearchText(res, maxChars)
		if n := utf8.RuneCountInString(text); n > maxChars {
			t.Fatalf("%d matches, %d unreadable: the answer is %d characters, more than %d", len(res.Matches), res.Unreadable, n, maxChars)
		}
		shown := strings.Count(text, "\n/memories/")
		if shown < len(res.Matches) && !strings.Contains(text, fmt.Sprintf("showing %d of the %d lines found", shown, res.Total)) {
			t.Fatalf("%d of %d matches shown, the answer does not say so: %.300q", shown, len(res.Matches), text)
		}
	}
}
