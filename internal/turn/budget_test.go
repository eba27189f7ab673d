package turn_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/memstore"
)

// lostStore makes its writes and then loses their answers, as a remote
// store does when its connection ends after the request was sent.
type lostStore struct{ memtool.Store }

func (s lostStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.Store.WriteFile(ctx, name, data, mode); err != nil {
		return err
	}
	return memtool.ErrOutcomeUnknown
}

// A call past the answer budget whose outcome is unknown (its change may
// have been made) is not said to have failed, which would tell the model
// that nothing changed: its answer says the outcome is unknown.
func TestBudgetKeepsOutcomeUnknown(t *testing.T) {
	store := memstore.New()
	last := pastBudget(t, store, lostStore{store}, `{"command":"create","path":"/memories/x.md","file_text":"x"}`)
	if strings.Contains(last, "failed") || !strings.Contains(last, "may or may not have made its change") {
		t.Errorf("the create's answer %q, want it to say the change may or may not have been made", last)
	}
	if _, err := store.ReadFile(context.Background(), "x.md", 1<<20); err != nil {
		t.Errorf("the create was made, yet: %v", err)
	}
}

// pastBudget fills store with two images whose views, five of one and one
// of the other, leave less of a line's answer budget than call's answer
// takes, runs that line and call over top (a wrapper of store), and
// returns call's answer, which t requires to be left out.
func pastBudget(t *testing.T, store, top memtool.Store, call string) string {
	t.Helper()
	big, left := webp(5_000_000), turn.MaxAnswerBytes
	left -= 5 * answerSize(t, big)
	fill := webp(left * 3 / 4)
	for answerSize(t, fill) > left-50 {
		fill = fill[:len(fill)-1]
	}
	for name, data := range map[string][]byte{"big.webp": big, "fill.webp": fill} {
		if err := store.WriteFile(context.Background(), name, data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	x := &turn.Runner{Mem: memtool.New(top, nil), Timeout: time.Minute, Workers: 4}
	line := "[" + strings.Repeat(`{"command":"view","path":"/memories/big.webp"},`, 5) +
		`{"command":"view","path":"/memories/fill.webp"},` + call + "]"
	got := runLine(t, x, line)
	if len(got) != 7 {
		t.Fatalf("%d answers, want 7", len(got))
	}
	for i, a := range got[:6] {
		if a.IsError {
			t.Fatalf("view %d: %.200s", i, a.Content)
		}
	}
	var last string
	_ = json.Unmarshal(got[6].Content, &last)
	if !strings.HasPrefix(last, "Error: The answer to this call ") {
		t.Fatalf("the answer %q of %s, want it left out", last, call)
	}
	return last
}

// webp returns a WebP image of n bytes, as far as a view can tell.
func webp(n int) []byte {
	b := make([]byte, n)
	copy(b, "RIFF\x00\x00\x00\x00WEBP")
	return b
}

// answerSize is the size of the answer to a view of the WebP image data.
func answerSize(t *testing.T, data []byte) int {
	b, err := json.Marshal(memtool.Result{Image: &memtool.Image{MediaType: "image/webp", Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// partStore has no RemoveAll, so that Memory removes a directory entry by
// entry, and fails the removal of the name fail: given a directory, once
// the entries in it are gone.
type partStore struct {
	memtool.Store
	fail string
}

func (s partStore) Remove(ctx context.Context, name string) error {
	if name == s.fail {
		return memtool.ErrNoSpace // any failure the store may meet
	}
	return s.Store.Remove(ctx, name)
}

// A call past the answer budget that was done in part (a delete of a
// directory that removed some of its files and then failed) is not said
// to have failed, which would tell the model that nothing changed: its
// answer says what the call's own answer said.
func TestBudgetKeepsPartialOutcome(t *testing.T) {
	store := memstore.New()
	for _, name := range []string{"d/a.md", "d/b.md"} {
		if _, err := memtool.MkdirAll(context.Background(), store, "d"); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteFile(context.Background(), name, []byte(name), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	last := pastBudget(t, store, partStore{store, "d"}, `{"command":"delete","path":"/memories/d"}`)
	if _, err := store.Stat(context.Background(), "d/a.md"); err == nil {
		t.Fatal("the delete removed nothing; the test needs it to remove d/a.md")
	}
	if strings.Contains(last, "The call itself failed") || !strings.Contains(last, "done only in part") {
		t.Errorf("the delete's answer %q, want it to say the delete was done only in part", last)
	}
}
