// Command filememory gives Claude a memory kept in a directory and runs one
// task with it. Run it twice and Claude remembers the first run:
//
//	export ANTHROPIC_API_KEY=...
//	go run ./examples/filememory "My name is Ada; remember it."
//	go run ./examples/filememory "What is my name?"
//
// The memory is in ./memories (-dir to change it); look at it with
// `memtool view /memories`.
package main

import (
	"context"
	"fmt"
	"log"

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

	client := anthropic.NewClient() // ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL if set
	runner := claude.NewRunner(&client, memtool.New(store, nil), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 4096,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))},
		},
	})
	final, err := runner.RunToCompletion(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(claude.Text(final))
}
