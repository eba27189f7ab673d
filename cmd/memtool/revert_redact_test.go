package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRevertRedactedSaysSo: a version reverted under the secrets policy's
// redact is written redacted, so the file does not hold the version:
// revert says so instead of reporting the file reverted to it, and the
// version stays, as it was.
func TestRevertRedactedSaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	plain := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"history":{}}`)}
	secret := "key AKIA" + "IOSFODNN7EXAMPLE\n"
	mustRunCLI(t, plain, "", "create", "--store", dir, "--text", secret, "/memories/k.md")
	mustRunCLI(t, plain, "", "str_replace", "--store", dir, "--old", "key AKIA"+"IOSFODNN7EXAMPLE", "--new", "no key", "/memories/k.md")
	redact := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"history":{},"secrets":"redact"}`)}
	out, stderr, code := runCLI(t, redact, "", "revert", "--store", dir, "--to", "1", "/memories/k.md")
	data, _ := os.ReadFile(filepath.Join(dir, "k.md"))
	if strings.Contains(string(data), "AKIA") {
		t.Fatalf("the reverted file holds the secret: %q", data)
	}
	if code != exitOK || out == "reverted /memories/k.md to version 1\n" || !strings.Contains(stderr, "not as version 1 holds it") {
		t.Errorf("revert under redact (the file holds %q): exit %d, %q, %q", data, code, out, stderr)
	}
	if v1 := mustRunCLI(t, plain, "", "diff", "--store", dir, "--from", "1", "--to", "1", "/memories/k.md"); v1 != "" {
		t.Errorf("diff of version 1 with itself: %q", v1)
	}
}
