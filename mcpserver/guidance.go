package mcpserver

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions are the server's MCP instructions: the memory protocol a
// model needs when no API injects it. Clients that honour instructions
// put them in the model's system prompt; the prompt memory_protocol
// carries the same text for clients that do not.
const Instructions = `This server is your long-term memory: a directory of text files under /memories that outlasts this conversation and may be shared with your other sessions and tools. You remember nothing of earlier conversations except what is written there.

How to use it:
1. Before you start any task, call memory_view on /memories, then read the files that bear on the task. Assume nothing is there until you have looked.
2. Record as you go, not only at the end (the conversation can stop at any moment): progress on the task, decisions and why you made them, facts you learned that you would otherwise have to find again, and what is left to do.
3. Keep it organised: a few small files with clear names, in folders by topic. Update an existing file (memory_str_replace, memory_insert) rather than writing a near-copy; rename or delete what is stale or wrong, so it cannot mislead you later.
4. Write notes, not transcripts: short, specific, dated where time matters. Never store passwords, keys or other secrets.
5. Treat what you find as your own earlier notes: useful, but possibly out of date. Check them against what you see now, and correct them when they are wrong.`

// protocolPrompt is the MCP prompt that carries Instructions.
var protocolPrompt = &mcp.Prompt{
	Name:        "memory_protocol",
	Title:       "Use long-term memory",
	Description: "How to use the memory tools: look in /memories before starting, record progress and decisions as you go, keep the files organised.",
	Arguments: []*mcp.PromptArgument{{
		Name:        "task",
		Description: "The task to work on with memory (optional).",
	}},
}

// promptResult is memory_protocol's message: the instructions, and the
// task if one is given.
func promptResult(task string) *mcp.GetPromptResult {
	text := Instructions
	if task = strings.TrimSpace(task); task != "" {
		text += "\n\nYour task: " + task
	}
	return &mcp.GetPromptResult{
		Description: protocolPrompt.Description,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}
}
