package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileLines are the memory tool commands of a model that fills the
// disk through history: rounds of a file as large as max_file_size,
// edited three times and deleted, each under a new name. Each round
// keeps four versions of 499 bytes.
func hostileLines(rounds int) string {
	var b strings.Builder
	for i := range rounds {
		p := fmt.Sprintf("/memories/f%d.md", i)
		fmt.Fprintf(&b, `{"command":"create","path":%q,"file_text":"v0%s"}`+"\n", p, strings.Repeat("a", 497))
		for j := 1; j <= 3; j++ {
			fmt.Fprintf(&b, `{"command":"str_replace","path":%q,"old_str":"v%d","new_str":"v%d"}`+"\n", p, j-1, j)
		}
		fmt.Fprintf(&b, `{"command":"delete","path":%q}`+"\n", p)
	}
	return b.String()
}

// versionsOnDisk adds up the versions kept under the directory store
// at root (history's directory, its usage counter and trash left out).
func versionsOnDisk(t *testing.T, root string) (size int64) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(root, historyDir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && (name == "trash" || name == "usage") {
			return filepath.SkipDir
		}
		if !d.IsDir() && name != "path" && name != "counter" {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			size += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// The policy file bounds the bytes of all versions: history.max_bytes,
// or, left out, ten times limits.max_bytes. A hostile loop through
// memtool exec, every command of it acknowledged, then leaves the
// versions under the bound; memtool history lists the newest, and a
// revert to a version dropped says there is no such version.
func TestPolicyHistoryMaxBytes(t *testing.T) {
	t.Parallel()
	limits := `"limits":{"max_file_size":500,"max_files":4,"max_bytes":1000}`
	for _, c := range []struct {
		policy string
		bound  int64
	}{
		{`{` + limits + `,"history":{}}`, 10 * 1000},
		{`{` + limits + `,"history":{"max_bytes":3000}}`, 3000},
	} {
		t.Run(fmt.Sprint(c.bound), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			store := filepath.Join(dir, "memories")
			policy := filepath.Join(dir, "policy.json")
			if err := os.WriteFile(policy, []byte(c.policy), 0o600); err != nil {
				t.Fatal(err)
			}
			run := func(stdin string, args ...string) (string, string, int) {
				var out, errb bytes.Buffer
				env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
					getenv: func(k string) string { return map[string]string{"MEMTOOL_POLICY": policy}[k] }}
				code := runWithEnv(context.Background(), append(args[:1:1], append([]string{"--store", store}, args[1:]...)...), env)
				return out.String(), errb.String(), code
			}
			const rounds = 30 // 120 versions, 59,880 bytes unbounded
			out, errs, code := run(hostileLines(rounds), "exec")
			if code != 0 || strings.Contains(out, "Error") || strings.Contains(out, "Limit exceeded") {
				t.Fatalf("exec: exit %d: %s\n%s", code, errs, out)
			}
			if size := versionsOnDisk(t, store); size > c.bound {
				t.Errorf("the versions hold %d bytes, over the bound %d", size, c.bound)
			}
			last := fmt.Sprintf("/memories/f%d.md", rounds-1)
			if out, errs, code := run("", "history", last); code != 0 || strings.Count(out, "\n") != 4 {
				t.Errorf("history %s: exit %d: %s\n%s; want its 4 versions", last, code, errs, out)
			}
			if _, errs, code := run("", "revert", "/memories/f0.md", "--to", "1"); code == 0 || !strings.Contains(errs, "no such version") {
				t.Errorf("revert to a dropped version: exit %d: %s", code, errs)
			}
		})
	}
}

// history.max_bytes is a number of bytes, 1 or more: 0 is refused rather
// than taken for "no bound" (as in limits) or for the default.
func TestPolicyHistoryMaxBytesStrict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ policy, want string }{
		{`{"history":{"max_bytes":0}}`, "history.max_bytes: 0: want a whole number from 1 to 9223372036854775807 (leave the field out for the default)"},
		{`{"history":{"max_bytes":-1}}`, "history.max_bytes: -1: want a whole number from 1 to 9223372036854775807 (leave the field out for the default)"},
		{`{"history":{"max_bytes":"64MiB"}}`, "history.max_bytes: want a whole number, got a string"},
		{`{"history":{"max_bytes":1}}`, ""},
	} {
		name := filepath.Join(dir, "policy.json")
		if err := os.WriteFile(name, []byte(c.policy), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadPolicy(name)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("policy %s: %v, want %q", c.policy, err, c.want)
		}
	}
}
