package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/memtool/memtool"
)

// maxExecLine bounds one line of exec input: a turn of several calls, each
// at most memtool.MaxInputBytes.
const maxExecLine = 8 * memtool.MaxInputBytes

func runExec(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	fs := newFlagSet("exec", "exec [--store URL] [--overwrite] < inputs.jsonl", env, &sf)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) > 0 {
		fmt.Fprintf(env.stderr, "memtool exec: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	mem, closer, err := openMemory(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool exec: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	if err := serveExec(ctx, mem, env.stdin, env.stdout); err != nil {
		fmt.Fprintf(env.stderr, "memtool exec: %v\n", err)
		return exitBrokenIO
	}
	return exitOK
}

// serveExec answers each non-blank input line with one output line. An
// answer is written only after the line's commands have finished, so their
// effects are durable by then. When ctx is cancelled (SIGINT, SIGTERM) it
// finishes the line in progress and returns. It returns an error only if in
// or out fails.
func serveExec(ctx context.Context, mem *memtool.Memory, in io.Reader, out io.Writer) error {
	type input struct {
		line    []byte
		tooLong bool
		err     error
	}
	lines := make(chan input)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(r, maxExecLine)
			select {
			case lines <- input{line, tooLong, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// Commands run on a context that an interrupt does not cancel, so that
	// the line in progress completes and is answered.
	run := context.WithoutCancel(ctx)
	for {
		var in input
		select {
		case <-ctx.Done():
			return nil
		case in = <-lines:
		}
		if in.err != nil && in.err != io.EOF {
			return fmt.Errorf("reading stdin: %w", in.err)
		}
		var answer []byte
		switch trimmed := bytes.TrimSpace(in.line); {
		case in.tooLong:
			answer = mustJSON(errorAnswer(fmt.Sprintf("Input line is too long: more than %d bytes", maxExecLine)))
		case len(trimmed) == 0:
			// Blank lines get no answer.
		default:
			answer = execLine(run, mem, trimmed)
		}
		if answer != nil {
			if _, err := out.Write(append(answer, '\n')); err != nil {
				return fmt.Errorf("writing stdout: %w", err)
			}
		}
		if in.err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line without its newline. A line longer than limit is
// consumed and reported as tooLong.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// execLine runs one object, or an array of objects concurrently.
func execLine(ctx context.Context, mem *memtool.Memory, line []byte) []byte {
	if line[0] != '[' {
		return mustJSON(mem.Run(ctx, line))
	}
	var inputs []json.RawMessage
	if err := json.Unmarshal(line, &inputs); err != nil {
		return mustJSON(errorAnswer("Tool input is not valid JSON: " + jsonErrorText(err)))
	}
	results := make([]memtool.Result, len(inputs))
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Go(func() { results[i] = mem.Run(ctx, in) })
	}
	wg.Wait()
	return mustJSON(results)
}

func errorAnswer(msg string) memtool.Result {
	return memtool.Result{Text: "Error: " + msg, IsError: true}
}

func jsonErrorText(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	return err.Error()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // results are plain strings and byte slices
	}
	return b
}
