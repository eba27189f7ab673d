// Package childproc runs a package's test binary as child processes that
// share a store with the test, for the tests that check what holds across
// processes: each child answers the lines the test sends it, one JSON
// answer a line, through its own open of the store.
package childproc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storeurl"
)

// An Answer is a child's answer to one line.
type Answer struct {
	Error bool
	Text  string
}

// Serve makes the test binary a child when the environment variable env
// is set, and then never returns: it opens the store that the variable's
// value (the spec Start was given, as JSON) names in its field Store,
// creating it if need be, calls open with the spec and the store, answers
// each line of standard input with the function open returned, one JSON
// Answer a line, and exits. Call it first in TestMain.
func Serve(env string, open func(ctx context.Context, spec []byte, store memtool.Store) (answer func(line string) Answer, err error)) {
	spec := os.Getenv(env)
	if spec == "" {
		return
	}
	if err := child([]byte(spec), open); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func child(spec []byte, open func(context.Context, []byte, memtool.Store) (func(string) Answer, error)) error {
	var s struct{ Store string }
	if err := json.Unmarshal(spec, &s); err != nil {
		return err
	}
	ctx := context.Background()
	store, closer, err := storeurl.Open(ctx, s.Store, &storeurl.Options{Create: true})
	if err != nil {
		return err
	}
	defer closer.Close()
	answer, err := open(ctx, spec, store)
	if err != nil {
		return err
	}
	return serve(answer, os.Stdin, os.Stdout)
}

func serve(answer func(string) Answer, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 4<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		if err := enc.Encode(answer(sc.Text())); err != nil {
			return err
		}
	}
	return sc.Err()
}

// A Child is the test binary running as a child (see Serve).
type Child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// Start starts the test binary as a child serving spec (see Serve, with
// the same env). When t's test ends, the child's input is closed, and t
// fails if the child did not then exit cleanly.
func Start(t *testing.T, env string, spec any) *Child {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd, in, out := Spawn(t, env, string(raw))
	c := &Child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	c.out.Buffer(nil, 4<<20)
	t.Cleanup(func() {
		c.in.Close()
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	})
	return c
}

// Spawn starts the test binary as a child with the environment variable
// env set to value (its TestMain decides what that makes it do), with
// pipes to its standard input and from its standard output; its standard
// error is the test's. The caller waits for it.
func Spawn(t testing.TB, env, value string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+value)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout
}

// Run sends the lines one after the other, each once the one before it
// is answered, and returns the answers.
func (c *Child) Run(lines []string) ([]Answer, error) {
	var out []Answer
	for _, line := range lines {
		if _, err := io.WriteString(c.in, line+"\n"); err != nil {
			return out, err
		}
		if !c.out.Scan() {
			return out, fmt.Errorf("child: no answer to %s (%v)", line, c.out.Err())
		}
		var a Answer
		if err := json.Unmarshal(c.out.Bytes(), &a); err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// All runs lines[i] in kids[i], all children at once, and returns the
// answers by child; t fails at once if a child does not answer.
func All(t *testing.T, kids []*Child, lines [][]string) [][]Answer {
	t.Helper()
	answers := make([][]Answer, len(kids))
	errs := make([]error, len(kids))
	var wg sync.WaitGroup
	for i, c := range kids {
		wg.Go(func() { answers[i], errs[i] = c.Run(lines[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return answers
}
