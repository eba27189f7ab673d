package storeurl_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storeurl"
)

// Open a store from the URL a user gave, creating it if it is missing, as
// a command that writes would.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "memtool-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(dir, "new", "memory.db")

	store, closer, err := storeurl.Open(ctx, url, &storeurl.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer closer.Close()
	mem := memtool.New(store, nil)
	res := mem.Run(ctx, []byte(`{"command":"create","path":"/memories/notes.md","file_text":"hello"}`))
	fmt.Println(res.Text)

	// A read-only command opens without Create: a mistyped URL is an
	// error, not an empty memory.
	_, _, err = storeurl.Open(ctx, "sqlite://"+filepath.Join(dir, "nmew", "memory.db"), nil)
	fmt.Println(err != nil)
	// Output:
	// File created successfully at: /memories/notes.md
	// true
}

// IsEmpty tells a migration whether its target holds anything yet.
func ExampleIsEmpty() {
	dir, err := os.MkdirTemp("", "memtool-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	empty, err := storeurl.IsEmpty(context.Background(), filepath.Join(dir, "copy"), "")
	fmt.Println(empty, err)
	// Output: true <nil>
}
