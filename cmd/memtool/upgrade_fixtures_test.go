package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The stores under testdata/upgrade were written by earlier builds of
// memtool (testdata/upgrade/make.sh, run with each build's binary), all
// under one policy stacking encrypt, history and expiry:
//
//	a     c9df509, 2026-11-30 11:08: encryption format mte1 (path-bound),
//	      history without version counters, no policy record, SQLite schema 1
//	1130  36a453f, 2026-11-30 23:43: mte2, history counters, policy record, schema 2
//	1202  acfdd94, 2026-12-02 21:09: history's usage counter, schema 3
//
// Each holds a directory store, an SQLite file, and the same two as
// multi-tenant stores. TestUpgradeFixtures checks that this build reads,
// edits, searches, reverts, collects and rekeys every one of them without
// losing a memory or a version.
var upgradeBuilds = []string{"a", "1130", "1202"}

// upgradeFiles is every live file the fixtures' stores hold, with its text.
var upgradeFiles = map[string]string{
	"/memories/a.md":         "line one\ninserted\nline 2 edited\nsecret alpha",
	"/memories/dir/b.md":     "bee",
	"/memories/dir/moved.md": "moving",
	"/memories/dir/sub/u.md": "ünïcode ☃\ndrei",
}

// viewText is what memtool view prints for a file holding text.
func viewText(p, text string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:\n", p)
	for i, line := range strings.Split(text, "\n") {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, line)
	}
	return b.String()
}

// upgradeCopy copies the fixtures of build into a new directory (a test
// must not change testdata) and returns it, with the environment that
// holds the fixtures' key.
func upgradeCopy(t *testing.T, build string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "upgrade", build))); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"keys", "policy.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "upgrade", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, map[string]string{"MEMTOOL_KEY_FILE": filepath.Join(dir, "keys")}
}

// upgradeStores lists the stores of a fixture copied to dir, each as the
// flags that open it.
func upgradeStores(dir string) map[string][]string {
	pol := filepath.Join(dir, "policy.json")
	sql := func(f string) string { return "sqlite://" + filepath.Join(dir, f) }
	return map[string][]string{
		"dir":       {"--store", filepath.Join(dir, "dir"), "--policy", pol},
		"sqlite":    {"--store", sql("store.db"), "--policy", pol},
		"dir-t1":    {"--store", filepath.Join(dir, "tenants"), "--tenant", "t1", "--policy", pol},
		"dir-t2":    {"--store", filepath.Join(dir, "tenants"), "--tenant", "t2", "--policy", pol},
		"sqlite-t1": {"--store", sql("tenants.db"), "--tenant", "t1", "--policy", pol},
	}
}

// cli runs one memtool command on a store and fails t unless it exits 0.
func (u upgradeRun) cli(cmd string, args ...string) string {
	u.t.Helper()
	return mustRunCLI(u.t, u.env, "", append(append([]string{cmd}, u.store...), args...)...)
}

type upgradeRun struct {
	t     *testing.T
	env   map[string]string
	store []string
}

// checkFiles fails t unless every live file reads as the fixture wrote it,
// with the edits in edited applied.
func (u upgradeRun) checkFiles(edited map[string]string) {
	u.t.Helper()
	for p, text := range upgradeFiles {
		if e, ok := edited[p]; ok {
			text = e
		}
		if got := u.cli("view", p); got != viewText(p, text) {
			u.t.Errorf("view %s:\n%s\nwant:\n%s", p, got, viewText(p, text))
		}
	}
}

func TestUpgradeFixtures(t *testing.T) {
	t.Parallel()
	for _, build := range upgradeBuilds {
		t.Run(build, func(t *testing.T) {
			t.Parallel()
			dir, env := upgradeCopy(t, build)
			for name, store := range upgradeStores(dir) {
				t.Run(name, func(t *testing.T) {
					upgradeCheckStore(upgradeRun{t: t, env: env, store: store})
				})
			}
		})
	}
}

// upgradeCheckStore runs the commands a user would on one fixture store.
func upgradeCheckStore(u upgradeRun) {
	t := u.t
	u.checkFiles(nil)
	if _, errOut, code := runCLI(t, u.env, "", append(append([]string{"view"}, u.store...), "/memories/gone.md")...); code != exitFailed {
		t.Errorf("view of the deleted file: exit %d, %s", code, errOut)
	}
	if out := u.cli("search", "alpha"); !strings.Contains(out, "/memories/a.md:4:secret alpha") {
		t.Errorf("search alpha: %q", out)
	}
	u.cli("info")

	// Every version the old build kept is listed and comes back.
	if out := u.cli("history", "/memories/a.md"); strings.Count(out, "\n") != 2 {
		t.Errorf("history of a.md: want 2 versions, got\n%s", out)
	}
	u.cli("revert", "/memories/a.md", "--to", "1")
	u.cli("revert", "/memories/gone.md", "--to", "1")
	edited := map[string]string{"/memories/a.md": "line one\nline two\nsecret alpha"}
	u.checkFiles(edited)
	if got, want := u.cli("view", "/memories/gone.md"), viewText("/memories/gone.md", "to delete"); got != want {
		t.Errorf("reverted gone.md: %q, want %q", got, want)
	}
	u.cli("revert", "/memories/a.md", "--to", "2")
	edited["/memories/a.md"] = "line one\nline 2 edited\nsecret alpha"

	// Edits keep working, and keep versions.
	u.cli("str_replace", "--old", "bee", "--new", "bee2", "/memories/dir/b.md")
	u.cli("insert", "--text", "top", "/memories/dir/sub/u.md", "0")
	edited["/memories/dir/b.md"] = "bee2"
	edited["/memories/dir/sub/u.md"] = "top\nünïcode ☃\ndrei"
	u.checkFiles(edited)
	u.cli("revert", "/memories/dir/b.md", "--to", "1")
	edited["/memories/dir/b.md"] = "bee"

	// gc moves a file only to its trash: whatever it moved comes back.
	u.cli("gc", "--unused-for", "1h", "--grace", "3650d")
	for p := range upgradeFiles {
		if _, _, code := runCLI(t, u.env, "", append(append([]string{"view"}, u.store...), p)...); code != exitOK {
			u.cli("restore", p)
		}
	}
	u.checkFiles(edited)
}

// After the upgrade, rekey seals every file and every kept version of the
// old builds' stores with a new key, so the old key can go; migrate copies
// them to a new SQLite file; tenants lists the old builds' tenants.
func TestUpgradeFixturesRekeyMigrate(t *testing.T) {
	t.Parallel()
	for _, build := range upgradeBuilds {
		t.Run(build, func(t *testing.T) {
			t.Parallel()
			dir, env := upgradeCopy(t, build)
			stores := upgradeStores(dir)
			for _, st := range []string{"dir", "sqlite"} {
				to := "sqlite://" + filepath.Join(dir, "migrated-"+st+".db")
				mustRunCLI(t, env, "", "migrate", "--from", stores[st][1], "--to", to)
				stores["migrated-"+st] = []string{"--store", to, "--policy", stores[st][3]}
			}
			for _, st := range []string{"tenants", "tenants.db"} {
				url := filepath.Join(dir, st)
				if strings.HasSuffix(st, ".db") {
					url = "sqlite://" + url
				}
				want := "t1\nt2\n"
				if st == "tenants.db" {
					want = "t1\n"
				}
				if got := mustRunCLI(t, env, "", "tenants", "--store", url); got != want {
					t.Errorf("tenants of %s: %q, want %q", st, got, want)
				}
			}

			key := strings.TrimSpace(mustRunCLI(t, env, "", "keygen", "--id", "new"))
			old, err := os.ReadFile(env["MEMTOOL_KEY_FILE"])
			if err != nil {
				t.Fatal(err)
			}
			both := filepath.Join(dir, "both")
			if err := os.WriteFile(both, []byte(key+"\n"+string(old)), 0o600); err != nil {
				t.Fatal(err)
			}
			for name, store := range stores {
				args := []string{"rekey", store[0], store[1]}
				if strings.Contains(name, "-t") {
					args = append(args, store[2], store[3])
				}
				mustRunCLI(t, map[string]string{"MEMTOOL_KEY_FILE": both}, "", args...)
			}
			newOnly := map[string]string{"MEMTOOL_KEY": key}
			for name, store := range stores {
				t.Run(name, func(t *testing.T) {
					u := upgradeRun{t: t, env: newOnly, store: store}
					u.checkFiles(nil)
					u.cli("revert", "/memories/a.md", "--to", "1")
					u.cli("revert", "/memories/gone.md", "--to", "1")
					u.checkFiles(map[string]string{"/memories/a.md": "line one\nline two\nsecret alpha"})
				})
			}
		})
	}
}
