package workdir_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/workdir"
	"github.com/memtool/memtool/memstore"
)

// Reading an empty file succeeds with no text, which the SDK's read tool
// answers as an empty text block; the API refuses an empty text block,
// in a tool_result too, so the run would stop there (and every retry
// with it). Through the runner and through RunTools, the request that
// carries the result is one the API takes.
func TestReadEmptyFile(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "empty.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hands, err := workdir.Open(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	turns := func() *claudetest.Server {
		srv := claudetest.NewServer(
			claudetest.Turn{Calls: []claudetest.ToolUse{call("read", `{"file_path":"empty.txt"}`)}},
			claudetest.Turn{Text: "It is empty."},
		)
		t.Cleanup(srv.Close)
		return srv
	}
	ctx := context.Background()

	t.Run("runner", func(t *testing.T) {
		srv := turns()
		client := srv.Client()
		runner := claude.NewRunner(&client, memtool.New(memstore.New(), nil), userParams("Read it."), hands.Option())
		if _, err := runner.RunToCompletion(ctx); err != nil {
			t.Fatalf("%v (refusals: %v)", err, srv.Refusals())
		}
		checkEmptyRead(t, srv)
	})
	t.Run("RunTools", func(t *testing.T) {
		srv := turns()
		client := srv.Client()
		params := claude.DeclareTools(claude.PrepareParams(userParams("Read it.").BetaMessageNewParams), hands.Tools()...)
		msg, err := client.Beta.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewBetaUserMessage(claude.RunTools(ctx, msg, hands.Tools()...)...))
		if _, err := client.Beta.Messages.New(ctx, params); err != nil {
			t.Fatalf("%v (refusals: %v)", err, srv.Refusals())
		}
		checkEmptyRead(t, srv)
	})
}

func checkEmptyRead(t *testing.T, srv *claudetest.Server) {
	t.Helper()
	srv.CheckRefusals(t)
	got := srv.Requests()[1].ToolResults()
	if len(got) != 1 || got[0].IsError || got[0].Text != "" {
		t.Errorf("the read of an empty file was answered %+v; want one result, no error, no text", got)
	}
}
