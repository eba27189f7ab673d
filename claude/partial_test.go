package claude_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// A streamed reply that breaks off after the turn's calls ran (the step's
// context ended while the reply streamed): the step run again sends the
// turn's results once, which the API takes, and no call runs twice.
func TestStreamBrokenOffAfterCallsRan(t *testing.T) {
	for _, threads := range []bool{true, false} {
		t.Run(fmt.Sprintf("threads=%v", threads), func(t *testing.T) {
			srv := claudetest.NewServer(
				claudetest.Turn{Calls: []claudetest.ToolUse{
					{Input: `{"command":"create","path":"/memories/x.md","file_text":"a\n"}`},
					{Input: `{"command":"insert","path":"/memories/x.md","insert_line":1,"insert_text":"b"}`},
				}},
				claudetest.Turn{Text: "Half a reply", Hang: true},
				claudetest.Turn{Text: "Done."},
			)
			defer srv.Close()
			client := srv.Client()
			store := memstore.New()
			runner := claude.NewStreamingRunner(&client, memtool.New(store, nil), userParams("hi"), claude.WithThreads(threads))
			step := func(ctx context.Context) (errs []error) {
				for _, err := range runner.NextStreaming(ctx) {
					if err != nil {
						errs = append(errs, err)
					}
				}
				return errs
			}
			if errs := step(context.Background()); errs != nil {
				t.Fatal(errs)
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-srv.Hung(); cancel() }()
			if errs := step(ctx); errs == nil {
				t.Fatal("the broken-off step reported no error")
			}
			if errs := step(context.Background()); errs != nil {
				t.Errorf("the step run again: %v", errs)
			}
			srv.CheckRefusals(t)
			if got := storetest.ReadText(t, store, "x.md"); got != "a\nb\n" {
				t.Errorf("x.md = %q", got)
			}
		})
	}
}
