// Command contextediting runs a long task whose conversation outgrows the
// context window: old tool results are cleared (the memory tool's are
// kept, so what Claude saved stays readable), and past a larger size the
// server compacts the conversation. Claude's text streams to stdout and
// each memory command is logged to stderr.
//
//	export ANTHROPIC_API_KEY=...
//	go run ./examples/contextediting "Read through my notes and write a summary to /memories/summary.md"
//
// claude.NewStreamingRunner adds the beta headers the edits need
// (context-management-2025-06-27, compact-2026-01-12).
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/examples/internal/cmdline"
	"github.com/memtool/memtool/filestore"
)

func main() {
	dir, task := cmdline.DirAndTask("memories", "")
	store, err := filestore.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	client := anthropic.NewClient()
	runner := claude.NewStreamingRunner(&client, memtool.New(store, nil), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 16000,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))},
		},
	},
		// Past 50,000 input tokens, clear all but the last 4 tool results,
		// at least 10,000 tokens' worth at a time; never memory's.
		claude.WithClearToolUses(claude.ClearToolUses{Trigger: 50000, Keep: 4, ClearAtLeast: 10000}),
		// Past 150,000 input tokens, summarize the conversation.
		claude.WithCompaction(claude.Compaction{Instructions: "Keep the names of the memory files you used."}),
		claude.WithOnCall(func(_ context.Context, c claude.Call) { log.Printf("memory: %s", c.Summary()) }),
		claude.WithMaxIterations(100),
	)
	for events := range runner.AllStreaming(context.Background()) {
		for ev, err := range events {
			if err != nil {
				log.Fatal(err)
			}
			switch {
			case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta":
				fmt.Print(ev.Delta.Text)
			case ev.Type == "message_stop":
				fmt.Println()
			}
		}
	}
	if last := runner.LastMessage(); last != nil && last.StopReason != anthropic.BetaStopReasonEndTurn {
		fmt.Fprintf(os.Stderr, "stopped: %s\n", last.StopReason)
		os.Exit(1)
	}
}
