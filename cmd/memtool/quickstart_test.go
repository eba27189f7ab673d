package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuickStart runs the memtool lines of the README's quick start,
// as a new user would in a fresh clone (with the built binary for
// `go run ./cmd/memtool`), in a directory with no ./memories: each must
// succeed, the store and its file must get the modes the README gives,
// and the last line must print the listing the README shows.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	bin := plainBinary(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := between(string(data), "\n## Quick start\n", "\n## ")
	if !ok {
		t.Fatal("README.md has no Quick start section")
	}
	script, ok := between(section, "```sh\n", "```\n")
	if !ok {
		t.Fatal("the quick start has no sh block")
	}
	_, rest, _ := strings.Cut(section, "what the model would see:\n")
	shown, ok := between(rest, "```\n", "```\n")
	if !ok {
		t.Fatal("the quick start shows no listing after 'what the model would see:'")
	}
	dir := t.TempDir()
	var lines, last string
	for _, line := range strings.Split(script, "\n") {
		cmd, found := strings.CutPrefix(line, "go run ./cmd/memtool ")
		if !found {
			continue
		}
		lines += line + "\n"
		c := exec.Command("bash", "-c", `"$MEMTOOL" `+cmd)
		c.Dir = dir
		c.Env = append(os.Environ(), "MEMTOOL="+bin, "HOME="+dir)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s\n%s(%v)", line, out, err)
		}
		last = string(out)
	}
	if lines == "" {
		t.Fatal("the quick start runs no memtool command")
	}
	if last != shown {
		t.Errorf("the quick start's last command printed\n%s\nthe README shows\n%s", last, shown)
	}
	for name, want := range map[string]os.FileMode{"memories": 0o700, "memories/todo.md": 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %o", name, fi.Mode(), err, want)
		}
	}
}

// between returns the text of s after the first start and before the
// next end.
func between(s, start, end string) (string, bool) {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return "", false
	}
	inner, _, ok := strings.Cut(after, end)
	return inner, ok
}
