package claude_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// endsAfter is a context that ends once its Err has been asked live times:
// it ends in the instant after one check of it and before the next, each
// in turn.
type endsAfter struct {
	context.Context
	live  int32
	asked atomic.Int32
}

func (c *endsAfter) Err() error {
	if c.asked.Add(1) > c.live {
		return context.Canceled
	}
	return nil
}

// A call of a followed turn whose context ends at any moment around its
// start: when Memory answers that it was cancelled before it ran, the
// retried step (the runner running the turn again) must run it, as the
// package doc promises for a call that did not run; when it answers
// anything else, it started, and the retried step answers the same
// without running it again. Before, the Tool looked at the context itself
// just before Memory did, and a context that ended between the two looks
// left the call answered "cancelled before it ran" for good.
func TestCallCancelledJustBeforeItRanRunsOnRetry(t *testing.T) {
	create := `{"command":"create","path":"/memories/x.md","file_text":"one\n"}`
	msg := betaMessage(t, create)
	for live := int32(0); live <= 4; live++ {
		t.Run(fmt.Sprint(live), func(t *testing.T) {
			store := memstore.New()
			tool := claude.NewTool(memtool.New(store, nil), &claude.ToolOptions{Turn: func() *anthropic.BetaMessage { return msg }})
			_, first := tool.Execute(&endsAfter{Context: context.Background(), live: live}, json.RawMessage(create))
			if first == nil {
				return // it ran to its end before the context did
			}
			_, err := store.ReadFile(context.Background(), "x.md", 1<<20)
			if strings.Contains(first.Error(), "nothing was changed") || strings.Contains(first.Error(), "before it ran") {
				if err == nil {
					t.Fatalf("x.md exists after the call answered %q", first)
				}
			}
			_, again := tool.Execute(context.Background(), json.RawMessage(create))
			if !strings.Contains(first.Error(), "before it ran") {
				if again == nil || again.Error() != first.Error() {
					t.Errorf("the retried call answered %v, first %q", again, first)
				}
				return
			}
			if again != nil {
				t.Errorf("the call answered %q first, and %q on the retried step; want it run then", first, again)
			}
			if got := storetest.ReadText(t, store, "x.md"); got != "one\n" {
				t.Errorf("x.md = %q after the retried step, want %q", got, "one\n")
			}
		})
	}
}
