package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
)

// TestCancelledTurnAnswersTruthfully cancels turns of chains of edits at
// random moments, on real stores, and checks every answer against what
// the store holds afterwards: a call that says it succeeded made its
// change, one that says it changed nothing (cancelled, before it ran or
// while it ran) did not, one whose answer was lost may have, and each
// file's chain ran in the order written.
func TestCancelledTurnAnswersTruthfully(t *testing.T) {
	for kind, open := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			for round := range 25 {
				t.Run(fmt.Sprint(round), func(t *testing.T) { cancelRound(t, open, r, round) })
			}
		})
	}
}

// cancelRound runs one round of TestCancelledTurnAnswersTruthfully, on a
// store of its own that closes with t.
func cancelRound(t *testing.T, open func(*testing.T, string) memtool.Store, r *rand.Rand, round int) {
	store := open(t, t.TempDir())
	x := &turn.Runner{Mem: memtool.New(store, nil), Timeout: time.Minute, Workers: 4}
	const files, edits = 8, 3
	var calls []string
	for f := range files {
		calls = append(calls, fmt.Sprintf(`{"command":"create","path":"/memories/d%d/f.md","file_text":"0"}`, f))
	}
	for e := range edits {
		for f := range files {
			calls = append(calls, fmt.Sprintf(`{"command":"str_replace","path":"/memories/./d%d/f.md","old_str":"%d","new_str":"%d"}`, f, e, e+1))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Duration(r.IntN(80_000))*time.Microsecond, cancel)
	var got []answer
	out := x.Line(ctx, []byte("["+strings.Join(calls, ",")+"]"))
	cancel()
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(calls) {
		t.Fatalf("round %d: answer %s (%v)", round, out, err)
	}
	for f := range files {
		// The calls of file f's chain made [lo, hi] of their
		// changes, as their answers say; the file must agree.
		lo, hi := 0, 0
		for e := range edits + 1 {
			a := got[e*files+f]
			var text string
			_ = json.Unmarshal(a.Content, &text)
			switch {
			case !a.IsError:
				if e < lo || e > hi {
					t.Fatalf("round %d: call %d of d%d succeeded, after %d to %d calls made their change: %q", round, e, f, lo, hi, text)
				}
				lo, hi = e+1, e+1
			case strings.Contains(text, "may or may not have been made"):
				if hi == e {
					hi++
				}
			case strings.Contains(text, "nothing was changed"), strings.Contains(text, "before it ran"),
				strings.Contains(text, "did not appear verbatim"), strings.Contains(text, "does not exist"):
			default:
				t.Fatalf("round %d: call %d of d%d: %q", round, e, f, text)
			}
		}
		made := 0 // the changes the file shows
		data, err := store.ReadFile(context.Background(), fmt.Sprintf("d%d/f.md", f), 100)
		switch {
		case err == nil:
			n, perr := strconv.Atoi(string(data))
			if perr != nil {
				t.Fatalf("round %d: d%d/f.md holds %q", round, f, data)
			}
			made = n + 1
		case !errors.Is(err, memtool.ErrNotExist):
			t.Fatalf("round %d: d%d/f.md: %v", round, f, err)
		}
		if made < lo || made > hi {
			t.Errorf("round %d: d%d/f.md shows %d changes made, yet the answers say %d to %d", round, f, made, lo, hi)
		}
	}
}
