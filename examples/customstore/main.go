// Command customstore runs Claude's memory tool on a store of your own (a
// Go map here; see store.go) with a conversation loop of your own on the GA
// Messages API, without the SDK's tool runner:
//
//	export ANTHROPIC_API_KEY=...
//	go run ./examples/customstore "Remember three facts about Go, then list what you remember."
//
// At the end it prints what the store holds.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
)

func main() {
	task := strings.Join(os.Args[1:], " ")
	if task == "" {
		log.Fatal("usage: customstore TASK")
	}
	ctx := context.Background()
	store := newMapStore()
	tool := claude.NewTool(memtool.New(store, nil), nil)

	client := anthropic.NewClient()
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 4096,
		Tools:     []anthropic.ToolUnionParam{claude.ToolParam()}, // {"type":"memory_20250818","name":"memory"}
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(task))},
	}
	for range 20 {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		for _, block := range msg.Content {
			if block.Type == "text" {
				fmt.Println(block.Text)
			}
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			break
		}
		// The memory calls of this turn, run concurrently (calls on one
		// path in the model's order), answered in order.
		results := tool.ToolResults(ctx, msg)
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
	}

	fmt.Println("\nThe store now holds:")
	res := tool.Memory().Execute(ctx, &memtool.View{Path: "/memories"})
	fmt.Println(res.Text)
}
