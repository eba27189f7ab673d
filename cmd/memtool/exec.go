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
// lets the line in progress finish and be answered, and returns. It returns
// an error only if in or out fails.
func serveExec(ctx context.Context, mem *memtool.Memory, in io.Reader, out io.Writer) error {
	// One goroutine reads, runs and answers; this one only waits for it or
	// for an interrupt. A line is handled under mu, so an interrupt waits
	// for the line in progress and then stops the loop before the next.
	var mu sync.Mutex
	stopped := false
	done := make(chan error, 1)
	run := context.WithoutCancel(ctx)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, readErr := readLine(r, maxExecLine)
			if readErr != nil && readErr != io.EOF {
				done <- fmt.Errorf("reading stdin: %w", readErr)
				return
			}
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			err := answerLine(run, mem, out, line, tooLong)
			mu.Unlock()
			if err != nil || readErr == io.EOF {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		mu.Lock()
		stopped = true
		mu.Unlock()
		return nil
	}
}

// answerLine runs one input line and writes its answer (none for a blank line).
func answerLine(ctx context.Context, mem *memtool.Memory, out io.Writer, line []byte, tooLong bool) error {
	var answer []byte
	switch trimmed := bytes.TrimSpace(line); {
	case tooLong:
		answer = mustJSON(errorAnswer(fmt.Sprintf("Input line is too long: more than %d bytes", maxExecLine)))
	case len(trimmed) == 0:
		return nil
	default:
		answer = execLine(ctx, mem, trimmed)
	}
	if _, err := out.Write(append(answer, '\n')); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
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
	b := []byte{'['}
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, mustJSON(r)...)
	}
	return append(b, ']')
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

// mustJSON encodes one result directly (json.Marshal of a Marshaler would
// re-scan and compact its output).
func mustJSON(r memtool.Result) []byte {
	b, err := r.MarshalJSON()
	if err != nil {
		panic(err) // results are plain strings and byte slices
	}
	return b
}
