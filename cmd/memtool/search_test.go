package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the master, which reads what is written
// to the terminal, and the terminal itself, with output post-processing
// off so that what is read is byte for byte what was written.
func openPTY(t *testing.T) (master, term *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestSearchTerminalControls: text a model wrote into a memory reaches the
// operator's terminal through memtool search with its control characters
// shown, not obeyed: an escape sequence (here one that would set the
// clipboard, and one that colours), a carriage return or a bidi override could otherwise
// rewrite or hide what the operator reads. Piped, the lines stay byte for
// byte as stored, as grep prints them.
func TestSearchTerminalControls(t *testing.T) {
	dir := t.TempDir()
	text := "tea \x1b]52;c;aGk=\x07\x1b[31mred\rok\u009b2J\u202eend\tx\n"
	mustRunCLI(t, nil, "", "create", "--store", dir, "--text", text, "/memories/a.md")

	raw := mustRunCLI(t, nil, "", "search", "--store", dir, "tea")
	if want := "/memories/a.md:1:" + strings.TrimSuffix(text, "\n") + "\n"; raw != want {
		t.Errorf("piped search: %q, want %q", raw, want)
	}

	master, term := openPTY(t)
	var errb bytes.Buffer
	code := run(context.Background(), []string{"search", "--store", dir, "tea"}, strings.NewReader(""), term, &errb)
	term.Close()
	got, _ := io.ReadAll(master) // ends with EIO once the terminal is closed and drained
	if code != exitOK {
		t.Fatalf("search on a terminal: exit %d, stderr %q", code, errb.String())
	}
	for _, c := range []string{"\x1b", "\x07", "\r", "\u009b", "\u202e"} {
		if bytes.Contains(got, []byte(c)) {
			t.Errorf("search on a terminal wrote the control character %q: %q", c, got)
		}
	}
	if want := `/memories/a.md:1:tea \x1b]52;c;aGk=\x07\x1b[31mred\rok\u009b2J\u202eend` + "\tx\n"; string(got) != want {
		t.Errorf("search on a terminal: %q, want %q", got, want)
	}
}
