package workdir_test

import (
	"encoding/json"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/workdir"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/storetest"
)

// jsonNames decodes the names of a request's tool declarations.
func jsonNames(tools json.RawMessage, names *[]string) error {
	var list []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(tools, &list); err != nil {
		return err
	}
	for _, t := range list {
		*names = append(*names, t.Name)
	}
	return nil
}

// call is a scripted tool_use block.
func call(name, input string) claudetest.ToolUse { return claudetest.ToolUse{Name: name, Input: input} }

func userParams(task string) anthropic.BetaToolRunnerParams {
	return anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 2048,
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))},
	}}
}

// openSession opens the store and the work directory afresh, as a new
// process would, and returns a Memory and the tools over them.
func openSession(t *testing.T, storeDir, work string) (*memtool.Memory, *workdir.Tools) {
	t.Helper()
	store, err := filestore.Open(storeDir, nil)
	mem := memtool.New(storetest.Opened(t, store, err), nil)
	hands, err := workdir.Open(work, nil)
	return mem, storetest.Opened(t, hands, err)
}

// resultTexts returns the text of each tool result of a request, by
// tool_use id, with "!" in front of the failed ones.
func resultTexts(r claudetest.Request) map[string]string {
	out := map[string]string{}
	for _, tr := range r.ToolResults() {
		text := tr.Text
		if tr.IsError {
			text = "!" + text
		}
		out[tr.ToolUseID] = text
	}
	return out
}
