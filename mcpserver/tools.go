package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
)

// A toolDef is one MCP tool: the memory command it runs, what the model
// reads about it, and whether a read-only identity may see it.
type toolDef struct {
	command     string // the memory tool's command
	title       string
	description string
	schema      string // JSON Schema of the arguments
	readOnly    bool   // view and search: the tools a read-only identity sees
	destructive bool   // removes or moves what is there
	// overwriteDescription, if set, is the description when the Memory's
	// Options.Overwrite is on (create replaces a file, and so is
	// destructive too).
	overwriteDescription string
	// run, if set, answers the call instead of the memory command (search,
	// which the memory tool does not have).
	run func(ctx context.Context, mem *memtool.Memory, args json.RawMessage) memtool.Result
}

// pathProperty describes a path parameter; every tool has one or two.
const pathProperty = `{"type": "string", "description": "An absolute path inside the memory directory: /memories itself or a path that starts with /memories/, such as /memories/project/notes.md."}`

// tools are the six memory commands as MCP tools, then memory_search, in
// the order a client lists them. Their parameters are the memory tool's, with its names and
// types; the descriptions are for a model that has never met that tool.
var tools = []toolDef{
	{
		command: "view",
		title:   "View memory",
		description: "Look at your memory directory, /memories, where notes persist between conversations. " +
			"For a directory, lists its files and folders two levels deep, one per line as size TAB path (folders end with /); hidden names (starting with '.') and node_modules are left out. " +
			"For a file, shows its text with a line number and a TAB before each line (the numbers are not part of the file); give view_range to see only some lines. " +
			"Images (.png, .jpg, .jpeg, .gif, .webp) come back as images. " +
			"Very long output is cut, with a note saying how to read the rest. " +
			"Start every task with memory_view on /memories.",
		schema: `{
	"type": "object",
	"properties": {
		"path": ` + pathProperty + `,
		"view_range": {
			"type": "array",
			"items": {"type": "integer"},
			"minItems": 2,
			"maxItems": 2,
			"description": "Optional, for files only: [first_line, last_line], counting from 1, both included; last_line -1 means up to the end of the file. Example: [10, 25]."
		}
	},
	"required": ["path"],
	"additionalProperties": false
}`,
		readOnly: true,
	},
	{
		command: "create",
		title:   "Create memory file",
		description: "Create a new text file in your memory directory with the given text. " +
			"Missing parent folders are made. " +
			"If something already exists at path, nothing changes and the result is an error: change an existing file with memory_str_replace or memory_insert, or delete it first. " +
			"Keep files small and focused, in folders by topic.",
		overwriteDescription: "Create a text file in your memory directory with the given text, or replace the whole text of the file already at path (its old text is lost). " +
			"Missing parent folders are made. " +
			"A folder at path is never replaced: that is an error and nothing changes. " +
			"To change part of an existing file, use memory_str_replace or memory_insert instead. " +
			"Keep files small and focused, in folders by topic.",
		schema: `{
	"type": "object",
	"properties": {
		"path": ` + pathProperty + `,
		"file_text": {"type": "string", "description": "The whole text of the new file (may be empty)."}
	},
	"required": ["path", "file_text"],
	"additionalProperties": false
}`,
	},
	{
		command: "str_replace",
		title:   "Replace text in memory file",
		description: "Edit a memory file by replacing one piece of its text. " +
			"old_str must appear exactly once in the file, character for character, including spaces and line breaks, and without the line numbers memory_view shows. " +
			"If it appears nowhere or more than once, nothing changes and the error says where; add neighbouring lines to old_str to make it unique. " +
			"The answer shows the edited lines.",
		schema: `{
	"type": "object",
	"properties": {
		"path": ` + pathProperty + `,
		"old_str": {"type": "string", "description": "The exact text to replace; it must occur exactly once in the file and may span several lines."},
		"new_str": {"type": "string", "description": "The text to put in its place. Leave it out, or give \"\", to delete old_str."}
	},
	"required": ["path", "old_str"],
	"additionalProperties": false
}`,
	},
	{
		command: "insert",
		title:   "Insert lines into memory file",
		description: "Add text to a memory file at a given line, without replacing anything. " +
			"insert_line 0 puts the text before the first line; N puts it after line N, as memory_view numbers the lines. " +
			"The text becomes lines of its own; one line break at its end is dropped.",
		schema: `{
	"type": "object",
	"properties": {
		"path": ` + pathProperty + `,
		"insert_line": {"type": "integer", "minimum": 0, "description": "The line after which to insert: 0 for the top of the file, N for after line N."},
		"insert_text": {"type": "string", "description": "The text to insert; it may hold several lines."}
	},
	"required": ["path", "insert_line", "insert_text"],
	"additionalProperties": false
}`,
	},
	{
		command: "delete",
		title:   "Delete from memory",
		description: "Delete a memory file, or a folder with everything in it. " +
			"This cannot be undone. /memories itself cannot be deleted. " +
			"Delete notes that are wrong or no longer useful, so they do not mislead later work.",
		schema: `{
	"type": "object",
	"properties": {
		"path": ` + pathProperty + `
	},
	"required": ["path"],
	"additionalProperties": false
}`,
		destructive: true,
	},
	{
		command: "rename",
		title:   "Rename or move in memory",
		description: "Rename or move a memory file or folder. " +
			"Missing parent folders of new_path are made. " +
			"It never overwrites: if new_path already exists, nothing changes and the result is an error.",
		schema: `{
	"type": "object",
	"properties": {
		"old_path": {"type": "string", "description": "The file or folder to move, a path inside /memories."},
		"new_path": {"type": "string", "description": "Where it goes: a path inside /memories where nothing exists yet."}
	},
	"required": ["old_path", "new_path"],
	"additionalProperties": false
}`,
		destructive: true,
	},
	{
		command: "search",
		title:   "Search memory",
		description: "Find the lines of your memory files that hold a text (case is ignored unless case_sensitive is true) " +
			"or match a regular expression (regex true, Go RE2 syntax). " +
			"Answers a line that counts the matches, then one line per match as PATH:LINE:TEXT, in path and line order; " +
			"use memory_view with view_range to read around a match. Hidden files are skipped, as memory_view skips them. " +
			"Use it when /memories holds more than memory_view shows at once.",
		schema: `{
	"type": "object",
	"properties": {
		"query": {"type": "string", "description": "The text to find in a line, or with regex a regular expression matched against each line."},
		"regex": {"type": "boolean", "description": "Optional: query is a regular expression (Go RE2 syntax)."},
		"case_sensitive": {"type": "boolean", "description": "Optional: match letters only in the case query gives."},
		"path": {"type": "string", "description": "Optional: search only this directory (and below) or this file, such as /memories/project. Default /memories."},
		"limit": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(memtool.MaxSearchLimit) + `, "description": "Optional: the most lines to answer (default ` + strconv.Itoa(memtool.DefaultSearchLimit) + `)."}
	},
	"required": ["query"],
	"additionalProperties": false
}`,
		readOnly: true,
		run: func(ctx context.Context, mem *memtool.Memory, args json.RawMessage) memtool.Result {
			return mem.SearchTool(ctx, args)
		},
	},
}

// name is the tool's MCP name: memory_ and the command.
func (d *toolDef) name() string { return "memory_" + d.command }

// builtTools are the tools as MCP lists them, built once: every server
// shares them (the SDK does not change a tool it is given). Their schemas
// are parsed here, so that adding a tool to a server, once per HTTP
// request, does not parse them again. They are keyed by builtKey.
var builtTools = sync.OnceValue(func() map[string]*mcp.Tool {
	built := map[string]*mcp.Tool{}
	for i := range tools {
		built[builtKey(tools[i].command, false)] = tools[i].tool(false)
		if tools[i].overwriteDescription != "" {
			built[builtKey(tools[i].command, true)] = tools[i].tool(true)
		}
	}
	return built
})

// builtKey is the key in builtTools of command's tool for a Memory that
// overwrites or not.
func builtKey(command string, overwrite bool) string {
	if overwrite {
		return command + "+overwrite"
	}
	return command
}

// listed is the tool the server lists for d on mem.
func (d *toolDef) listed(mem *memtool.Memory) *mcp.Tool {
	return builtTools()[builtKey(d.command, d.overwriteDescription != "" && mem.Options().Overwrite)]
}

// tool builds the MCP tool the server lists, for a Memory that overwrites
// or not.
func (d *toolDef) tool(overwrite bool) *mcp.Tool {
	no, yes := false, true
	ann := &mcp.ToolAnnotations{Title: d.title, ReadOnlyHint: d.readOnly, OpenWorldHint: &no}
	description := d.description
	if !d.readOnly {
		ann.DestructiveHint = &no
		if d.destructive || overwrite {
			ann.DestructiveHint = &yes
		}
	}
	if overwrite {
		description = d.overwriteDescription
	}
	schema := new(jsonschema.Schema)
	if err := json.Unmarshal([]byte(d.schema), schema); err != nil {
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", d.name(), err)) // a constant of ours
	}
	return &mcp.Tool{
		Name:        d.name(),
		Title:       d.title,
		Description: description,
		InputSchema: schema,
		Annotations: ann,
	}
}

// handler runs the tool's command on mem. The arguments, with "command"
// added, are the tool input memtool exec would get, and go through the
// same strict parser, so the answer is exec's, byte for byte.
func (d *toolDef) handler(mem *memtool.Memory, opts *Options) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.callTimeout())
		defer cancel()
		if d.run != nil {
			args := req.Params.Arguments
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage("{}")
			}
			return callResult(d.run(ctx, mem, args)), nil
		}
		if msg := d.unknownArgument(req.Params.Arguments); msg != "" {
			return callResult(memtool.Result{Text: "Error: " + msg, IsError: true}), nil
		}
		return callResult(mem.Run(ctx, toolInput(d.command, req.Params.Arguments))), nil
	}
}

// unknownArgument says which member of args (an object) the tool does
// not have, or is "". The memory tool's parser ignores unknown
// parameters, but the tool's schema says there are none
// (additionalProperties false), and a call that misnames one, as
// memory_str_replace with new_text for new_str, would otherwise do
// something else than the client asked: delete old_str. A key that is a
// parameter's name in another case, and a second "command", are left to
// the parser, which words them as exec does.
func (d *toolDef) unknownArgument(args json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "" // not an object: the parser's to refuse
	}
	params := toolParams()[d.command]
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
		key := tok.(string)
		if memtool.FoldKey(key) == memtool.FoldKey("command") || slices.ContainsFunc(params, func(p string) bool { return memtool.FoldKey(p) == memtool.FoldKey(key) }) {
			continue
		}
		if r := []rune(key); len(r) > maxShownKey { // the model reads it: a key may be megabytes long
			key = string(r[:maxShownKey]) + "…"
		}
		return fmt.Sprintf("Unknown parameter '%s' for %s (its parameters: %s)", key, d.name(), strings.Join(params, ", "))
	}
	return ""
}

// maxShownKey bounds the characters of an unknown key an error shows.
const maxShownKey = 64

// toolParams are the parameter names of each command's tool, from its
// schema, in name order.
var toolParams = sync.OnceValue(func() map[string][]string {
	params := map[string][]string{}
	for i := range tools {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal([]byte(tools[i].schema), &schema); err != nil {
			panic(fmt.Sprintf("mcpserver: the schema of %s: %v", tools[i].name(), err)) // a constant of ours
		}
		params[tools[i].command] = slices.Sorted(maps.Keys(schema.Properties))
	}
	return params
})

// toolInput is the memory tool input for command with args: args with a
// "command" member added in front. Absent arguments are an empty object.
// Arguments that are not an object are passed on as they are, for the
// parser to refuse as it would refuse them from exec.
func toolInput(command string, args json.RawMessage) []byte {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' {
		return trimmed
	}
	head, _ := json.Marshal(command) // a constant of ours: never fails
	input := append([]byte(`{"command":`), head...)
	rest := bytes.TrimSpace(trimmed[1:])
	if len(rest) > 0 && rest[0] != '}' {
		input = append(input, ',')
	}
	return append(input, rest...)
}

// callResult is the MCP form of a memory result: one text content, or one
// image content for an image view.
func callResult(r memtool.Result) *mcp.CallToolResult {
	var c mcp.Content = &mcp.TextContent{Text: r.Text}
	if r.Image != nil {
		c = &mcp.ImageContent{Data: r.Image.Data, MIMEType: r.Image.MediaType}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{c}, IsError: r.IsError}
}

// ToolCall turns a memory tool input, as memtool exec reads it, into the
// MCP call that does the same: the tool memory_<command> and the input's
// other members as its arguments, in their order (a second "command"
// among them, which the server refuses as exec refuses it). It is the inverse of
// what the server does to a call, for replaying recorded inputs over MCP.
// An input that is not a JSON object with a known "command" string is an
// error: no tool runs it. So is "search": exec refuses it as an unknown
// command, while memory_search would answer it.
func ToolCall(input []byte) (tool string, args json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", nil, errors.New("mcpserver: tool input is not a JSON object")
	}
	out := []byte{'{'}
	command, found := "", false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, fmt.Errorf("mcpserver: tool input: %w", err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return "", nil, fmt.Errorf("mcpserver: tool input: %w", err)
		}
		key := tok.(string)
		// Only the first command names the tool. A second one stays in
		// the arguments, where the server's parser refuses it as exec's
		// refuses it: taking it as the command would run what exec did not.
		if key == "command" && !found {
			found = true
			if err := json.Unmarshal(value, &command); err != nil {
				return "", nil, errors.New(`mcpserver: tool input: "command" is not a string`)
			}
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), value...)
	}
	if _, err := dec.Token(); err != nil {
		return "", nil, fmt.Errorf("mcpserver: tool input: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", nil, errors.New("mcpserver: tool input: data after the object")
	}
	for i := range tools {
		if tools[i].command == command && tools[i].run == nil {
			return tools[i].name(), append(out, '}'), nil
		}
	}
	return "", nil, fmt.Errorf("mcpserver: tool input: no tool for command %q", command)
}

// ToolInput is the memory tool input the server runs for a call of tool
// with args, the input memtool exec would answer alike (unless args has a
// parameter the tool does not have: exec ignores it, the server refuses
// the call); it is false for a tool the server does not have, and for
// memory_search, which runs no memory tool input.
func ToolInput(tool string, args json.RawMessage) ([]byte, bool) {
	for i := range tools {
		if tools[i].name() == tool && tools[i].run == nil {
			return toolInput(tools[i].command, args), true
		}
	}
	return nil, false
}

// ResultOf is the memtool.Result a tool call's answer carries, for Go
// clients: the inverse of what the server sends. An answer that is not one
// text or image content is an error.
func ResultOf(res *mcp.CallToolResult) (memtool.Result, error) {
	if len(res.Content) != 1 {
		return memtool.Result{}, fmt.Errorf("mcpserver: the answer has %d contents, want 1", len(res.Content))
	}
	switch c := res.Content[0].(type) {
	case *mcp.TextContent:
		return memtool.Result{Text: c.Text, IsError: res.IsError}, nil
	case *mcp.ImageContent:
		return memtool.Result{Image: &memtool.Image{MediaType: c.MIMEType, Data: c.Data}, IsError: res.IsError}, nil
	}
	return memtool.Result{}, fmt.Errorf("mcpserver: the answer holds %T, want text or an image", res.Content[0])
}
