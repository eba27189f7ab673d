package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/internal/treesnap"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// The commands that only read a store leave it as they found it: every
// file's path, bytes and mode and every directory's modification time
// (a directory or file+blob store), the database file's bytes and the
// names beside it (SQLite), the tables and their rows (PostgreSQL). The
// writes the README documents for reads are left out: a file's view under
// expiry records a use, and a view records a policy the store has not
// recorded yet (so the stores here are made under the policies they are
// read with).

// readOnlyCommands are the read-only commands, each without its --store.
// use: under expiry the command records a use of a file (README: a view
// is a use), a documented write.
var readOnlyCommands = []struct {
	args  []string
	stdin string
	use   bool
}{
	{args: []string{"view", "/memories"}},
	{args: []string{"view", "/memories/a.md"}, use: true},
	{args: []string{"view", "/memories/missing.md"}},
	{args: []string{"search", "tea"}},
	{args: []string{"search", "--regex", "m.lk"}},
	{args: []string{"info"}},
	{args: []string{"tenants"}},
	{args: []string{"history", "/memories/a.md"}},
	{args: []string{"diff", "/memories/a.md"}},
	{args: []string{"restore", "--list"}},
	{args: []string{"gc", "--dry-run", "--unused-for", "1h"}},
	{args: []string{"exec"}, stdin: `{"command":"view","path":"/memories"}` + "\n" + `{"command":"view","path":"/memories/d/b.md"}` + "\n", use: true},
}

// A roBackend makes a store of one kind and snapshots it.
type roBackend struct {
	name string
	// make returns the URL of a new store; empty: one that exists but
	// holds nothing yet (an empty directory, an empty file, a schema
	// without tables).
	make func(t *testing.T, empty bool) string
	snap func(t *testing.T, url string) []string
}

func roBackends(t *testing.T) []roBackend {
	bs := []roBackend{
		{"dir", func(t *testing.T, _ bool) string {
			dir := filepath.Join(t.TempDir(), "memories")
			roMust(t, os.Mkdir(dir, 0o700))
			return dir
		}, func(t *testing.T, url string) []string { return treeSnapshot(t, url, true) }},
		{"sqlite", func(t *testing.T, _ bool) string {
			path := filepath.Join(t.TempDir(), "m.db")
			roMust(t, os.WriteFile(path, nil, 0o600))
			return "sqlite://" + path
		}, func(t *testing.T, url string) []string {
			// The folder's time moves with SQLite's -wal and -shm files,
			// which a reader makes and removes: its names and the
			// file's bytes are what a read must keep.
			return treeSnapshot(t, filepath.Dir(strings.TrimPrefix(url, "sqlite://")), false)
		}},
		{"file+blob", func(t *testing.T, _ bool) string {
			dir := filepath.Join(t.TempDir(), "bucket")
			roMust(t, os.Mkdir(dir, 0o700))
			return "file+blob://" + dir
		}, func(t *testing.T, url string) []string {
			return treeSnapshot(t, strings.TrimPrefix(url, "file+blob://"), true)
		}},
	}
	if os.Getenv(pgtest.EnvVar) != "" {
		bs = append(bs, roBackend{"postgres", func(t *testing.T, _ bool) string { return pgtest.URL(t) }, pgSnapshot})
	}
	return bs
}

func roMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// treeSnapshot is treesnap.Take of dir.
func treeSnapshot(t *testing.T, dir string, mtimes bool) []string {
	t.Helper()
	out, err := treesnap.Take(dir, mtimes)
	roMust(t, err)
	return out
}

// pgSnapshot lists the tables of the URL's schema, each with its rows'
// number and a digest of their text.
func pgSnapshot(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	roMust(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`)
	roMust(t, err)
	var names []string
	for rows.Next() {
		var n string
		roMust(t, rows.Scan(&n))
		names = append(names, n)
	}
	roMust(t, rows.Err())
	var out []string
	for _, n := range names {
		var count int64
		var sum string
		roMust(t, conn.QueryRow(ctx, `SELECT count(*), coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM "`+n+`" x`).Scan(&count, &sum))
		out = append(out, fmt.Sprintf("%s: %d rows, md5 %s", n, count, sum))
	}
	return out
}

// checkReadsWriteNothing runs every read-only command on url with vars,
// and fails on any change of the store's snapshot, but for the uses that
// expiry records if uses. A command may fail (history without a history
// policy, tenants of a store without them), but not by exit status 3: a
// store that does not open shows nothing of what a read does to it.
func checkReadsWriteNothing(t *testing.T, b roBackend, url string, vars map[string]string, extra []string, uses bool) {
	t.Helper()
	before := b.snap(t, url)
	for _, c := range readOnlyCommands {
		args := append(append([]string{c.args[0], "--store", url}, extra...), c.args[1:]...)
		if c.args[0] == "tenants" && len(extra) > 0 {
			continue // --tenant is not one of its flags
		}
		_, stderr, code := runCLI(t, vars, c.stdin, args...)
		// search exits 2 for a store it cannot open.
		if code == exitStore && c.args[0] != "tenants" || c.args[0] == "search" && code == exitSearchError {
			t.Errorf("memtool %q: exit %d: %s", args, code, stderr)
		}
		after := b.snap(t, url)
		if uses && c.use {
			before = after
			continue
		}
		if !slices.Equal(after, before) {
			t.Errorf("memtool %q (exit %d, %s) changed the store:\nbefore %q\nafter  %q", args, code, strings.TrimSpace(stderr), before, after)
			before = after
		}
	}
}

func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	t.Parallel()
	key, err := encrypt.NewKey("k1")
	roMust(t, err)
	tmp := t.TempDir()
	writePolicy := func(name, text string) string {
		p := filepath.Join(tmp, name)
		roMust(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	policies := []struct {
		name string
		vars map[string]string
	}{
		{"no policy", nil},
		{"limits, secrets, audit", map[string]string{"MEMTOOL_POLICY": writePolicy("watch.json",
			`{"limits":{"max_files":100,"max_file_size":4096},"secrets":"reject","audit":"`+filepath.Join(tmp, "audit.jsonl")+`"}`)}},
		{"encrypt, history", map[string]string{"MEMTOOL_KEY": key.Text(), "MEMTOOL_POLICY": writePolicy("kept.json", `{"encrypt":true,"history":{"max_versions":5}}`)}},
	}
	for _, b := range roBackends(t) {
		for _, p := range policies {
			t.Run(b.name+"/"+p.name, func(t *testing.T) {
				url := b.make(t, false)
				for _, args := range [][]string{
					{"create", "--text", "tea time", "/memories/a.md"},
					{"create", "--text", "milk", "/memories/d/b.md"},
					{"str_replace", "--old", "time", "--new", "at five", "/memories/a.md"},
				} {
					args = append([]string{args[0], "--store", url}, args[1:]...)
					if _, stderr, code := runCLI(t, p.vars, "", args...); code != exitOK {
						t.Fatalf("memtool %q: exit %d: %s", args, code, stderr)
					}
				}
				checkReadsWriteNothing(t, b, url, p.vars, nil, false)
			})
		}
		t.Run(b.name+"/expiry", func(t *testing.T) {
			// Only a file's view records a use: a listing, a search,
			// gc --dry-run and restore --list do not.
			vars := map[string]string{"MEMTOOL_POLICY": writePolicy(b.name+"-expiry.json", `{"expiry":true}`)}
			url := b.make(t, false)
			mustRunCLI(t, vars, "", "create", "--store", url, "--text", "tea", "/memories/a.md")
			mustRunCLI(t, vars, "", "create", "--store", url, "--text", "milk", "/memories/d/b.md")
			checkReadsWriteNothing(t, b, url, vars, nil, true)
		})
		t.Run(b.name+"/policy not recorded", func(t *testing.T) {
			// The commands that only look check a policy against the
			// store's record but never make one (README); view does.
			// search once recorded it: a store searched once with a
			// history policy refused every later process without it.
			vars := map[string]string{"MEMTOOL_POLICY": writePolicy(b.name+"-new.json", `{"expiry":true,"history":{}}`)}
			url := b.make(t, false)
			mustRunCLI(t, nil, "", "create", "--store", url, "--text", "tea", "/memories/a.md")
			before := b.snap(t, url)
			for _, args := range [][]string{{"info"}, {"search", "tea"}, {"history", "/memories/a.md"}, {"diff", "/memories/a.md"}, {"restore", "--list"}, {"gc", "--dry-run", "--unused-for", "1h"}} {
				args = append([]string{args[0], "--store", url}, args[1:]...)
				_, stderr, code := runCLI(t, vars, "", args...)
				if code == exitStore || args[0] == "search" && code != exitOK {
					t.Errorf("memtool %q: exit %d: %s", args, code, stderr)
				}
				if after := b.snap(t, url); !slices.Equal(after, before) {
					t.Errorf("memtool %q (exit %d) changed the store:\nbefore %q\nafter  %q", args, code, before, after)
					before = after
				}
			}
		})
		if b.name == "dir" {
			t.Run("dir/made by hand", func(t *testing.T) {
				// As the SDK's memory helper leaves a directory
				// (helper:), with no file of memtool's.
				url := b.make(t, false)
				roMust(t, os.MkdirAll(filepath.Join(url, "d"), 0o700))
				roMust(t, os.WriteFile(filepath.Join(url, "a.md"), []byte("tea time"), 0o600))
				roMust(t, os.WriteFile(filepath.Join(url, "d", "b.md"), []byte("milk"), 0o600))
				checkReadsWriteNothing(t, b, url, nil, nil, false)
			})
		}
		t.Run(b.name+"/tenant", func(t *testing.T) {
			url := b.make(t, false)
			mustRunCLI(t, nil, "", "create", "--store", url, "--tenant", "alice", "--text", "tea", "/memories/a.md")
			checkReadsWriteNothing(t, b, url, nil, []string{"--tenant", "alice"}, false)
		})
		t.Run(b.name+"/empty", func(t *testing.T) {
			// exec creates the store it is given (README), so it is
			// not among the reads of a store that is not one yet.
			url := b.make(t, true)
			before := b.snap(t, url)
			for _, c := range readOnlyCommands {
				if c.args[0] == "exec" {
					continue
				}
				args := append([]string{c.args[0], "--store", url}, c.args[1:]...)
				_, stderr, code := runCLI(t, nil, c.stdin, args...)
				if after := b.snap(t, url); !slices.Equal(after, before) {
					t.Errorf("memtool %q (exit %d, %s) changed the empty store:\nbefore %q\nafter  %q", args, code, strings.TrimSpace(stderr), before, after)
					before = after
				}
			}
		})
	}
}
