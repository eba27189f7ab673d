package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestRoundTrips counts the round trips between the store and the server
// that each command of the memory tool costs, through memtool.Memory, on
// the wire: a proxy counts each time the client sends after the server
// answered. The statements are prepared once per connection (pgx's
// statement cache), so the store has one connection and every command runs
// once before the run that is counted.
//
// What the counts are made of: a read (Stat, ReadFile, ReadDir) is one
// statement; a write sends BEGIN, the tenant's lock and its first
// statement in one batch, then its change, then COMMIT (a round trip of
// its own: see db.Write); a Mkdir of an existing directory is one
// statement, without a transaction.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	p, proxied := startProxy(t, pgtest.URL(t))
	s := openWith(t, proxied, pgstore.Options{MaxConns: 1})
	mem := memtool.New(s, nil)
	run := func(input string) {
		t.Helper()
		if res := mem.Run(ctx, []byte(input)); res.IsError {
			t.Fatalf("%s: %s", input, res.Text)
		}
	}
	run(`{"command":"create","path":"/memories/d/a.md","file_text":"alpha\nbeta\n"}`)
	run(`{"command":"create","path":"/memories/top.md","file_text":"top\n"}`)
	run(`{"command":"create","path":"/memories/e/sub/b.md","file_text":"b\n"}`)

	for _, c := range []struct {
		name string
		want int
		// input returns the command of run i (0 warms up, 1 is counted).
		input func(i int) string
	}{
		{"view file", 1, func(int) string { return `{"command":"view","path":"/memories/d/a.md"}` }},
		{"view directory", 2, func(int) string { return `{"command":"view","path":"/memories/d"}` }},
		// A view lists two levels: each subdirectory is one ReadDir more.
		{"view directory with a subdirectory", 3, func(int) string { return `{"command":"view","path":"/memories/e"}` }},
		{"create at the root", 2, func(i int) string {
			return fmt.Sprintf(`{"command":"create","path":"/memories/new%d.md","file_text":"x"}`, i)
		}},
		{"create in a directory", 3, func(i int) string {
			return fmt.Sprintf(`{"command":"create","path":"/memories/d/new%d.md","file_text":"x"}`, i)
		}},
		// MkdirAll's Stat (the directory is not there), the Mkdir, the
		// write: one round trip more than a Mkdir first would take, for
		// the one less of every create beside an existing file.
		{"create in a new directory", 6, func(i int) string {
			return fmt.Sprintf(`{"command":"create","path":"/memories/n%d/x.md","file_text":"x"}`, i)
		}},
		{"str_replace", 2, func(i int) string {
			return []string{
				`{"command":"str_replace","path":"/memories/d/a.md","old_str":"alpha","new_str":"gamma"}`,
				`{"command":"str_replace","path":"/memories/d/a.md","old_str":"gamma","new_str":"alpha"}`,
			}[i]
		}},
		{"insert", 2, func(i int) string {
			return fmt.Sprintf(`{"command":"insert","path":"/memories/d/a.md","insert_line":1,"insert_text":"line %d"}`, i)
		}},
		{"delete", 3, func(i int) string { return fmt.Sprintf(`{"command":"delete","path":"/memories/d/new%d.md"}`, i) }},
		{"rename at the root", 4, func(i int) string {
			return []string{
				`{"command":"rename","old_path":"/memories/top.md","new_path":"/memories/moved.md"}`,
				`{"command":"rename","old_path":"/memories/moved.md","new_path":"/memories/top.md"}`,
			}[i]
		}},
		{"rename in a directory", 5, func(i int) string {
			return []string{
				`{"command":"rename","old_path":"/memories/d/a.md","new_path":"/memories/d/b.md"}`,
				`{"command":"rename","old_path":"/memories/d/b.md","new_path":"/memories/d/a.md"}`,
			}[i]
		}},
	} {
		run(c.input(0))
		p.roundTrips()
		run(c.input(1))
		if got := p.roundTrips(); got != c.want {
			t.Errorf("%s: %d round trips, want %d", c.name, got, c.want)
		}
	}

	// A connection idle for a while is not pinged before its next use
	// (pgxpool's default pings one idle for more than a second).
	time.Sleep(1500 * time.Millisecond)
	p.roundTrips()
	run(`{"command":"view","path":"/memories/d/a.md"}`)
	if got := p.roundTrips(); got != 1 {
		t.Errorf("view file after the connection idled: %d round trips, want 1", got)
	}
}
