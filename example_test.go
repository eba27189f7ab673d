package memtool_test

import (
	"context"
	"fmt"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// Run a tool_use input exactly as the model sent it.
func ExampleMemory_Run() {
	mem := memtool.New(memstore.New(), nil)
	ctx := context.Background()

	res := mem.Run(ctx, []byte(`{"command":"create","path":"/memories/notes.md","file_text":"# Notes\n- likes tea"}`))
	fmt.Println(res.Text)

	res = mem.Run(ctx, []byte(`{"command":"str_replace","path":"/memories/notes.md","old_str":"tea","new_str":"green tea"}`))
	fmt.Println(res.Text)

	res = mem.Run(ctx, []byte(`{"command":"view","path":"/memories"}`))
	fmt.Println(res.Text)
	// Output:
	// File created successfully at: /memories/notes.md
	// The memory file has been edited. Here is the snippet showing the change (with line numbers):
	//      1	# Notes
	//      2	- likes green tea
	// Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
	// 4K	/memories
	// 25B	/memories/notes.md
}

// A failed command is a Result, not a Go error: its text is what the model reads.
func ExampleMemory_Execute() {
	mem := memtool.New(memstore.New(), nil)
	res := mem.Execute(context.Background(), &memtool.View{Path: "/memories/../etc/passwd"})
	fmt.Println(res.IsError, res.Text)
	// Output:
	// true Error: Path /memories/../etc/passwd would escape /memories directory
}

// The path gate turns a virtual path into a store name, or refuses it.
func ExampleCleanPath() {
	for _, p := range []string{"/memories", "/memories/a/./b/../c.md", "/memoriesX", "/memories/a\\b"} {
		name, _, err := memtool.CleanPath(p)
		fmt.Printf("%q %v\n", name, err)
	}
	// Output:
	// "" <nil>
	// "a/c.md" <nil>
	// "" Path must be /memories or start with /memories/, got: /memoriesX
	// "" Path /memories/a\b contains a backslash (U+005C), which is not allowed
}
