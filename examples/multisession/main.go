// Command multisession runs one session of the multi-session development
// pattern: memory holds a progress log, a feature checklist and a decisions
// file; every session reads them first and updates them at its end, and a
// feature is marked done only after end-to-end verification.
//
//	export ANTHROPIC_API_KEY=...
//	go run ./examples/multisession "We are building a URL shortener. List its features."
//	go run ./examples/multisession "Continue."     # the next session picks up from memory
//
// The first run seeds ./project-memory from the dev template (the same as
// `memtool init --template dev --store ./project-memory`); later runs keep
// what earlier sessions wrote.
package main

import (
	"context"
	"fmt"
	"log"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/template"
	"github.com/memtool/memtool/examples/internal/cmdline"
	"github.com/memtool/memtool/filestore"
)

func main() {
	dir, task := cmdline.DirAndTask("project-memory", "Continue with the project.")
	ctx := context.Background()
	store, err := filestore.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	dev := template.Dev()
	seeded, err := dev.Seed(ctx, store) // keeps files that are already there
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range seeded {
		if s.Created {
			log.Printf("seeded %s", s.Path)
		}
	}

	client := anthropic.NewClient()
	runner := claude.NewRunner(&client, memtool.New(store, nil), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 8192,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))},
		},
	},
		claude.WithGuidance(dev.Guidance), // read these first; update at the end; done means verified
		claude.WithOrganizedMemory(),
		claude.WithMaxIterations(40),
		claude.WithOnCall(func(_ context.Context, c claude.Call) { log.Printf("memory: %s", c.Summary()) }),
	)
	final, err := runner.RunToCompletion(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(claude.Text(final))
}
