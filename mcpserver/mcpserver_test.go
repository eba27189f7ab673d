package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/internal/mcpcalls"
	"github.com/memtool/memtool/internal/testpng"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// connect runs a server for mem in this process and returns a go-sdk client
// session connected to it over the SDK's in-memory transport.
func connect(t testing.TB, mem *memtool.Memory, opts *mcpserver.Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.NewServer(mem, opts).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// asResult is the memtool.Result an MCP tool result carries; it fails t
// unless the result is one text or image content.

// batteryCalls are the battery's inputs with their MCP calls; the four
// inputs whose command is no command (K1 to K4) have no tool and are left
// out.
func batteryCalls(t *testing.T) (inputs [][]byte, tools []string, args []json.RawMessage) {
	t.Helper()
	all := battery.Inputs(t)
	for _, in := range all {
		tool, a, err := mcpserver.ToolCall(in)
		if err != nil {
			continue
		}
		inputs, tools, args = append(inputs, in), append(tools, tool), append(args, a)
	}
	if left := len(all) - len(inputs); left != 4 {
		t.Fatalf("%d battery inputs have no tool, want 4 (K1-K4)", left)
	}
	return inputs, tools, args
}

// checkBattery runs the battery through session and, input by input,
// through Memory.Run on a new memstore (what memtool exec does), and fails
// t for every answer that differs.
func checkBattery(t *testing.T, session *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	exec := memtool.New(memstore.New(), nil)
	inputs, tools, args := batteryCalls(t)
	errs := 0
	for i, in := range inputs {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tools[i], Arguments: args[i]})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, want := mcpcalls.Result(t, res), exec.Run(ctx, in)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
		if got.IsError {
			errs++
		}
	}
	if errs < 50 || errs == len(inputs) {
		t.Errorf("%d of %d battery answers are errors: the battery should hold both kinds", errs, len(inputs))
	}
}

func TestBatteryInMemory(t *testing.T) {
	checkBattery(t, connect(t, memtool.New(memstore.New(), nil), nil))
}

func TestToolList(t *testing.T) {
	ctx := context.Background()
	cs := connect(t, memtool.New(memstore.New(), nil), nil)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		checkTool(t, tool)
	}
	want := []string{"memory_view", "memory_create", "memory_str_replace", "memory_insert", "memory_delete", "memory_rename", "memory_search"}
	sorted := slices.Sorted(slices.Values(want)) // clients get them by name
	if !slices.Equal(names, sorted) || !slices.Equal(mcpserver.ToolNames(false), want) {
		t.Errorf("tools %v (ToolNames %v), want %v", names, mcpserver.ToolNames(false), want)
	}
}

// params are the memory tool's parameters of each command, with their
// JSON Schema types, as the contract gives them.
var params = map[string]map[string]string{
	"memory_view":        {"path": "string", "view_range": "array"},
	"memory_create":      {"path": "string", "file_text": "string"},
	"memory_str_replace": {"path": "string", "old_str": "string", "new_str": "string"},
	"memory_insert":      {"path": "string", "insert_line": "integer", "insert_text": "string"},
	"memory_delete":      {"path": "string"},
	"memory_rename":      {"old_path": "string", "new_path": "string"},
	"memory_search":      {"query": "string", "regex": "boolean", "case_sensitive": "boolean", "path": "string", "limit": "integer"},
}

// required are the parameters a call must give.
var required = map[string][]string{
	"memory_view":        {"path"},
	"memory_create":      {"path", "file_text"},
	"memory_str_replace": {"path", "old_str"},
	"memory_insert":      {"path", "insert_line", "insert_text"},
	"memory_delete":      {"path"},
	"memory_rename":      {"old_path", "new_path"},
	"memory_search":      {"query"},
}

// checkTool checks one listed tool: its schema has the memory tool's
// parameters, each described, and its annotations say what it does.
func checkTool(t *testing.T, tool *mcp.Tool) {
	t.Helper()
	var schema struct {
		Type       string
		Properties map[string]struct {
			Type        string
			Description string
		}
		Required             []string
		AdditionalProperties *bool
	}
	b, _ := json.Marshal(tool.InputSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("%s: schema %s: %v", tool.Name, b, err)
	}
	if schema.Type != "object" || !slices.Equal(schema.Required, required[tool.Name]) || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
		t.Errorf("%s: schema %s", tool.Name, b)
	}
	got := map[string]string{}
	for name, p := range schema.Properties {
		got[name] = p.Type
		if len(p.Description) < 20 {
			t.Errorf("%s.%s: description %q is too short to help", tool.Name, name, p.Description)
		}
	}
	if !reflect.DeepEqual(got, params[tool.Name]) {
		t.Errorf("%s: parameters %v, want %v", tool.Name, got, params[tool.Name])
	}
	if len(tool.Description) < 100 || tool.Name == "memory_view" && !strings.Contains(tool.Description, "/memories") {
		t.Errorf("%s: description %q", tool.Name, tool.Description)
	}
	a := tool.Annotations
	view := tool.Name == "memory_view" || tool.Name == "memory_search" // read-only
	destructive := tool.Name == "memory_delete" || tool.Name == "memory_rename"
	switch {
	case a == nil:
		t.Fatalf("%s: no annotations", tool.Name)
	case a.ReadOnlyHint != view:
		t.Errorf("%s: readOnlyHint %v", tool.Name, a.ReadOnlyHint)
	case !view && (a.DestructiveHint == nil || *a.DestructiveHint != destructive):
		t.Errorf("%s: destructiveHint %v, want %v", tool.Name, a.DestructiveHint, destructive)
	case a.OpenWorldHint == nil || *a.OpenWorldHint:
		t.Errorf("%s: openWorldHint should be false", tool.Name)
	case a.Title == "":
		t.Errorf("%s: no title", tool.Name)
	}
}

// pngFile returns a small, real PNG image.
func pngFile(t *testing.T) []byte {
	t.Helper()
	return testpng.PNG()
}

func TestImageView(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	pic := pngFile(t)
	if err := store.WriteFile(ctx, "pic.png", pic, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, memtool.New(store, nil), nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/pic.png"}})
	if err != nil {
		t.Fatal(err)
	}
	got := mcpcalls.Result(t, res)
	if got.IsError || got.Image == nil || got.Image.MediaType != "image/png" || !bytes.Equal(got.Image.Data, pic) {
		t.Errorf("view of a PNG: %+v", got)
	}
}

// listing is the whole memory's listing, to see that nothing changed.
func listing(t *testing.T, mem *memtool.Memory) string {
	t.Helper()
	r := mem.Run(context.Background(), []byte(`{"command":"view","path":"/memories"}`))
	if r.IsError {
		t.Fatal(r.Text)
	}
	return r.Text
}

// seeded is a Memory holding /memories/a.txt.
func seeded(t testing.TB) *memtool.Memory {
	t.Helper()
	mem := memtool.New(memstore.New(), nil)
	if r := mem.Run(context.Background(), []byte(`{"command":"create","path":"/memories/a.txt","file_text":"one\ntwo"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	return mem
}

// checkReadOnly checks that a session of newSession lists memory_view
// alone, that it works, and that every call that would change the memory
// is refused and changes nothing. Each call has a session of its own:
// over HTTP the refusal is a 403, after which the go-sdk client ends its
// session.
func checkReadOnly(t *testing.T, newSession func() *mcp.ClientSession, mem *memtool.Memory) {
	t.Helper()
	ctx := context.Background()
	res, err := newSession().ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 || res.Tools[0].Name != "memory_search" || res.Tools[1].Name != "memory_view" {
		t.Fatalf("a read-only identity lists %d tools, want memory_search and memory_view alone", len(res.Tools))
	}
	before := listing(t, mem)
	for _, call := range mcpcalls.Writes() {
		res, err := newSession().CallTool(ctx, &call)
		if err == nil {
			t.Errorf("%s with read access: %+v, want a refusal", call.Name, res)
		}
	}
	if after := listing(t, mem); after != before {
		t.Errorf("read-only calls changed the memory:\n%s\nwas\n%s", after, before)
	}
	view, err := newSession().CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}})
	if err != nil || view.IsError {
		t.Fatalf("view with read access: %v %+v", err, view)
	}
}

func TestReadOnly(t *testing.T) {
	mem := seeded(t)
	ro := connect(t, mem, &mcpserver.Options{ReadOnly: true})
	checkReadOnly(t, func() *mcp.ClientSession { return ro }, mem)
	if got := mcpserver.ToolNames(true); !slices.Equal(got, []string{"memory_view", "memory_search"}) {
		t.Errorf("ToolNames(true) = %v", got)
	}
	// The same calls with write access succeed, so the refusals above are
	// for want of access.
	cs := connect(t, seeded(t), nil)
	for _, call := range mcpcalls.Writes() {
		res, err := cs.CallTool(context.Background(), &call)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError && call.Name != "memory_rename" { // a.txt is deleted by then
			t.Errorf("%s with write access: %+v", call.Name, mcpcalls.Result(t, res))
		}
	}
}

func TestInstructionsAndPrompt(t *testing.T) {
	ctx := context.Background()
	cs := connect(t, memtool.New(memstore.New(), nil), nil)
	init := cs.InitializeResult()
	if init.Instructions != mcpserver.Instructions || init.ServerInfo.Name != "memtool" {
		t.Errorf("initialize result: %+v", init)
	}
	for _, want := range []string{"memory_view on /memories", "Record as you go", "organised"} {
		if !strings.Contains(mcpserver.Instructions, want) {
			t.Errorf("instructions lack %q", want)
		}
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "memory_protocol" {
		t.Fatalf("prompts: %v %+v", err, prompts)
	}
	for _, task := range []string{"", "fix the login bug"} {
		p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "memory_protocol", Arguments: map[string]string{"task": task}})
		if err != nil {
			t.Fatal(err)
		}
		want := mcpserver.Instructions
		if task != "" {
			want += "\n\nYour task: " + task
		}
		if len(p.Messages) != 1 || p.Messages[0].Role != "user" || p.Messages[0].Content.(*mcp.TextContent).Text != want {
			t.Errorf("prompt for task %q: %+v", task, p.Messages)
		}
	}
}

// TestArguments covers arguments that do not come from a memory tool
// input: each is answered as exec answers the input the server makes of it.
// (A parameter the tool does not have is refused: TestArgumentsRefused.)
func TestArguments(t *testing.T) {
	ctx := context.Background()
	mem := seeded(t)
	cs := connect(t, mem, nil)
	for _, c := range []struct {
		tool string
		args any
		want string // exec's input for the same call
	}{
		{"memory_view", nil, `{"command":"view"}`},
		{"memory_view", map[string]any{}, `{"command":"view"}`},
		{"memory_view", json.RawMessage(` { } `), `{"command":"view"}`},
		{"memory_view", map[string]any{"path": "/memories/a.txt", "command": "delete"}, `{"command":"view","command":"delete","path":"/memories/a.txt"}`},
		{"memory_view", map[string]any{"path": "/memories/a.txt", "Path": "/memories"}, `{"command":"view","Path":"/memories","path":"/memories/a.txt"}`},
		{"memory_view", map[string]any{"path": "/memories/a.txt", "view_range": []any{1, 1.5}}, `{"command":"view","path":"/memories/a.txt","view_range":[1,1.5]}`},
		{"memory_insert", map[string]any{"path": "/memories/a.txt", "insert_line": "1", "insert_text": "x"}, `{"command":"insert","insert_line":"1","insert_text":"x","path":"/memories/a.txt"}`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
		want := seeded(t).Run(ctx, []byte(c.want))
		if got := mcpcalls.Result(t, res); got != want {
			t.Errorf("%s %v:\n got %+v\nwant %+v", c.tool, c.args, got, want)
		}
	}
	if got := listing(t, mem); !strings.Contains(got, "/memories/a.txt") {
		t.Errorf("a call with a second command changed the memory:\n%s", got)
	}
}

// TestToolCall checks that ToolCall is the inverse of what the server
// does: the input the server rebuilds from its call parses to the same
// command.
func TestToolCall(t *testing.T) {
	inputs := battery.Inputs(t)
	// exec refuses a second command, however it is spelled: so must the
	// call ToolCall makes of it, rather than run the last one.
	for _, in := range []string{
		`{"command":"view","command":"create","path":"/memories/x","file_text":"y"}`,
		`{"command":"view","path":"/memories/x","\u0063ommand":"delete"}`,
		`{"path":"/memories/x","command":"create","file_text":"y","command":"view"}`,
	} {
		inputs = append(inputs, []byte(in))
	}
	for _, in := range inputs {
		tool, args, err := mcpserver.ToolCall(in)
		if err != nil {
			continue
		}
		want, werr := memtool.ParseCommand(in)
		back, ok := mcpserver.ToolInput(tool, args)
		if !ok {
			t.Fatalf("no tool %s", tool)
		}
		got, gerr := memtool.ParseCommand(back)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
			t.Errorf("%s -> %s %s:\n got %#v, %v\nwant %#v, %v", in, tool, args, got, gerr, want, werr)
		}
	}
	if _, ok := mcpserver.ToolInput("memory_frobnicate", nil); ok {
		t.Error("ToolInput knows memory_frobnicate")
	}
	// memory_search runs no memory tool input: exec has no search command.
	if in, ok := mcpserver.ToolInput("memory_search", json.RawMessage(`{"query":"two"}`)); ok {
		t.Errorf("ToolInput(memory_search) = %s, an input exec refuses while the tool answers", in)
	}
	for _, bad := range []string{`[]`, `{"path":"/memories"}`, `{"command":"frobnicate"}`, `{"command":1}`, `{"command":"view"`, `{"command":"view"} x`} {
		if tool, _, err := mcpserver.ToolCall([]byte(bad)); err == nil {
			t.Errorf("ToolCall(%s) = %s, want an error", bad, tool)
		}
	}
}

// TestToolCallAnswersAsExec: the MCP call ToolCall makes of an input
// answers what exec answers for that input. exec has no search command, so
// ToolCall makes no call of one: memory_search would answer it.
func TestToolCallAnswersAsExec(t *testing.T) {
	ctx := context.Background()
	cs := connect(t, seeded(t), nil)
	for _, in := range []string{
		`{"command":"view","path":"/memories/a.txt"}`,
		`{"command":"search","query":"two"}`,
		`{"command":"search","query":"two","path":"/memories"}`,
	} {
		tool, args, err := mcpserver.ToolCall([]byte(in))
		if err != nil {
			continue
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s -> %s %s: %v", in, tool, args, err)
		}
		if got, want := mcpcalls.Result(t, res), seeded(t).Run(ctx, []byte(in)); got != want {
			t.Errorf("%s -> %s %s:\n got %+v\nexec %+v", in, tool, args, got, want)
		}
	}
}

// memory_search answers what Memory.SearchTool answers, for a read-only
// identity too; a query it refuses is an error result the model reads.
func TestSearchTool(t *testing.T) {
	mem := seeded(t)
	cs := connect(t, mem, &mcpserver.Options{ReadOnly: true})
	for _, args := range []map[string]any{
		{"query": "TWO"},
		{"query": "^o", "regex": true, "path": "/memories/a.txt"},
		{"query": "two", "case_sensitive": true, "limit": 1},
		{"query": "("},
		{"query": "x", "regex": true, "path": "/etc"},
		{"query": "x", "colour": "red"},
		{},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: args})
		if err != nil {
			if _, ok := args["query"]; ok && len(args) < 3 {
				t.Errorf("memory_search %v: %v", args, err)
			}
			continue // a call the SDK's schema check refuses
		}
		input, _ := json.Marshal(args)
		want := mem.SearchTool(context.Background(), input)
		got := res.Content[0].(*mcp.TextContent).Text
		if got != want.Text || res.IsError != want.IsError {
			t.Errorf("memory_search %v: %q (error %v), want %q (error %v)", args, got, res.IsError, want.Text, want.IsError)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "two"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "1 matching line:\n/memories/a.txt:2:two" {
		t.Errorf("memory_search two: %v %+v", err, res)
	}
}

// TestCreateOverwrite: memory_create's description and annotations say
// what create does with the Memory's Options.Overwrite: refuse an existing
// file, or replace it (destructive); and it does that.
func TestCreateOverwrite(t *testing.T) {
	ctx := context.Background()
	for _, overwrite := range []bool{false, true} {
		mem := memtool.New(memstore.New(), &memtool.Options{Overwrite: overwrite})
		cs := connect(t, mem, nil)
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "memory_create" })
		create := res.Tools[i]
		refuses := strings.Contains(create.Description, "If something already exists at path, nothing changes and the result is an error")
		replaces := strings.Contains(create.Description, "or replace the whole text of the file already at path")
		if refuses == overwrite || replaces != overwrite || *create.Annotations.DestructiveHint != overwrite {
			t.Errorf("overwrite %v: destructive %v, description %q", overwrite, *create.Annotations.DestructiveHint, create.Description)
		}
		var results []memtool.Result
		for _, text := range []string{"first", "second"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/a.txt", "file_text": text}})
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, mcpcalls.Result(t, res))
		}
		want := "first"
		if overwrite {
			want = "second"
		}
		got := mem.Run(ctx, []byte(`{"command":"view","path":"/memories/a.txt"}`))
		if results[0].IsError || results[1].IsError != !overwrite || !strings.Contains(got.Text, "\t"+want) {
			t.Errorf("overwrite %v: creates %+v, then the file: %q", overwrite, results, got.Text)
		}
		// A folder is never replaced, as the description says.
		mem.Run(ctx, []byte(`{"command":"create","path":"/memories/dir/x.txt","file_text":"x"}`))
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/dir", "file_text": "y"}}); err != nil || !res.IsError {
			t.Errorf("overwrite %v: create over a folder: %v %+v", overwrite, err, res)
		}
	}
}
