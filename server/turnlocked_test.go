package server_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
	"github.com/memtool/memtool/storetest"
)

// A turn on a directory store whose write lock another process holds
// answers every call, in its place, and truthfully: the changes, each
// past its deadline, say they changed nothing, and nothing changed; the
// calls that follow them on the same file ran after them, and the view of
// another file ran.
func TestTurnOnALockedStoreAnswersTruthfully(t *testing.T) {
	dir := t.TempDir()
	store, err := filestore.Open(dir, nil)
	store = storetest.Opened(t, store, err)
	if err := store.WriteFile(context.Background(), "b.md", []byte("bee"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	// The lock of another process: a flock of the directory, on an open
	// file of its own.
	locker, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	if err := unix.Flock(int(locker.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *server.Config) {
		c.Open = func(context.Context, string) (memtool.Store, error) { return store, nil }
		c.CallTimeout = time.Second // less than the store's busy timeout
	})
	_, tok := f.key(t, "alice", keys.Write)
	addr, stop, done := listen(t, f.server, "", "")
	t.Cleanup(func() { stop(); <-done })

	answers := postTurn(t, addr, tok, strings.NewReader(`[`+
		`{"command":"create","path":"/memories/a.md","file_text":"one"},`+
		`{"command":"view","path":"/memories/a.md/"},`+
		`{"command":"view","path":"/memories/./b.md"},`+
		`{"command":"rename","old_path":"/memories/b.md","new_path":"/memories/d/b.md"},`+
		`{"command":"view","path":"/memories/d/b.md"},`+
		`{"command":"create","path":"/memories/c.md","file_text":"sea"}]`), 6)
	unix.Flock(int(locker.Fd()), unix.LOCK_UN)

	want := []struct {
		isError bool
		text    string
	}{
		{true, "The create command on /memories/a.md did not finish in time"},
		{true, "Error: The path /memories/a.md/ does not exist."},
		{false, "Here's the content of /memories/./b.md with line numbers:\n     1\tbee"},
		{true, "The rename command on /memories/b.md did not finish in time"},
		{true, "Error: The path /memories/d/b.md does not exist."},
		{true, "The create command on /memories/c.md did not finish in time"},
	}
	for i, a := range answers {
		if a.IsError != want[i].isError || !strings.Contains(a.Content, want[i].text) {
			t.Errorf("call %d: %v %q, want %v and %q", i, a.IsError, a.Content, want[i].isError, want[i].text)
		}
	}
	for _, name := range []string{"a.md", "c.md", "d"} {
		if _, err := store.Stat(context.Background(), name); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("%s: %v, want it missing: every change said it changed nothing", name, err)
		}
	}
	if data, err := store.ReadFile(context.Background(), "b.md", 100); string(data) != "bee" {
		t.Errorf("b.md: %q, %v", data, err)
	}
}
