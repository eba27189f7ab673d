package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "memories")
	key, _ := encrypt.NewKey("k1")
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"limits":{"max_file_size":100},"secrets":"reject","audit":"`+filepath.Join(dir, "audit.jsonl")+`","encrypt":true,"expiry":true,"history":{"max_versions":5,"max_age":"30d"}}`), 0o600)
	var out, errb bytes.Buffer
	env := &cliEnv{
		stdin: strings.NewReader(`{"command":"create","path":"/memories/a.md","file_text":"tea, no sugar"}
{"command":"create","path":"/memories/b.md","file_text":"` + strings.Repeat("x", 101) + `"}
{"command":"create","path":"/memories/c.md","file_text":"AKIA` + `IOSFODNN7EXAMPLE"}
{"command":"str_replace","path":"/memories/a.md","old_str":"no","new_str":"two"}
{"command":"view","path":"/memories/a.md"}
`),
		stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			return map[string]string{"MEMTOOL_KEY": key.String(), "MEMTOOL_POLICY": policy}[k]
		},
	}
	if code := runWithEnv(context.Background(), []string{"exec", "--store", store}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Log(out.String())
	for _, want := range []string{"File created successfully", "Limit exceeded (file size)", "an AWS access key ID on line 1", "tea, two sugar"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("answers lack %q:\n%s", want, out.String())
		}
	}
	disk, _ := os.ReadFile(filepath.Join(store, "a.md"))
	if bytes.Contains(disk, []byte("tea")) {
		t.Error("stored in the clear")
	}
	log, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(log), `"outcome":"refused"`) {
		t.Errorf("audit: %s", log)
	}
	t.Log(string(log))
	entries, _ := os.ReadDir(store)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Log(names)
}
