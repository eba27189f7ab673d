package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The curl examples of docs/resource.md run as written against a real
// memtool serve, and every answer the doc shows in a comment ("# {…}",
// "# Etag: …", with "…" eliding the rest) is what the server printed.
func TestDocsResourceCurlExamples(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	doc, err := os.ReadFile("../../docs/resource.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Examples with curl\n\n```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal(`docs/resource.md has no "## Examples with curl" sh block`)
	}
	const docURL = "B=https://memory.example.com"
	if !strings.Contains(block, docURL) {
		t.Fatalf("the curl block no longer sets %s:\n%s", docURL, block)
	}
	url := tenantBackends()[0].URL(t)
	token := addKey(t, url, "alice", "write")
	p := startServe(t, plainBinary(t), url)
	script := strings.Replace(block, docURL, "B="+p.url, 1)
	cmd := exec.Command("bash", "-c", "set -e\n"+script)
	cmd.Env = childEnv("MEMTOOL_TOKEN=" + token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the curl block failed: %v\n%s", err, out)
	}
	shown := 0
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		answer, isAnswer := strings.CutPrefix(line, "# ")
		answer = strings.TrimSpace(answer)
		if !isAnswer || !(strings.HasPrefix(answer, "{") || strings.HasPrefix(answer, "Etag: ")) {
			continue
		}
		want, _, _ := strings.Cut(answer, "…")
		shown++
		if !strings.Contains(string(out), want) {
			t.Errorf("docs/resource.md shows %q; the server printed:\n%s", want, out)
		}
	}
	if shown < 5 {
		t.Fatalf("found %d answers in the curl block's comments; the parser is broken", shown)
	}
}
