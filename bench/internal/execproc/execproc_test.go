package execproc_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/bench/internal/execproc"
)

// A Proc runs the real memtool exec: each RoundTrip gets the answer to its
// line, without the newline, leaves the caller's array alone, and Close
// ends the process cleanly.
func TestRoundTrip(t *testing.T) {
	// go test puts its own go first on PATH.
	bin := filepath.Join(t.TempDir(), "memtool")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/memtool/memtool/cmd/memtool").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p, err := execproc.Start(bin, filepath.Join(t.TempDir(), "memories"))
	if err != nil {
		t.Fatal(err)
	}
	create := `{"command":"create","path":"/memories/a.md","file_text":"hello"}`
	buf := make([]byte, len(create), len(create)+1)
	copy(buf, create)
	buf = append(buf, 'X')[:len(create)] // a byte past the end, to see it kept
	for _, c := range []struct {
		input []byte
		want  string
	}{
		{buf, "File created successfully at: /memories/a.md"},
		{[]byte(`{"command":"view","path":"/memories/a.md"}`), "hello"},
	} {
		ans, err := p.RoundTrip(c.input)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(ans), "\n") {
			t.Errorf("answer %q holds a newline", ans)
		}
		var a struct {
			IsError bool            `json:"is_error"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(ans, &a); err != nil || a.IsError || !strings.Contains(string(a.Content), c.want) {
			t.Errorf("%s: answer %s, %v; want success with %q", c.input, ans, err, c.want)
		}
	}
	if got := buf[:len(create)+1][len(create)]; got != 'X' {
		t.Errorf("RoundTrip wrote %q past the input", got)
	}
	// CPU counts the process's threads' time, which answering grows.
	before, err := p.CPU()
	if err != nil || before <= 0 {
		t.Fatalf("CPU() = %v, %v; want a positive time", before, err)
	}
	for range 200 {
		if _, err := p.RoundTrip([]byte(`{"command":"view","path":"/memories"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if after, err := p.CPU(); err != nil || after <= before {
		t.Errorf("CPU() = %v, %v after 200 more answers; want more than %v", after, err, before)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
