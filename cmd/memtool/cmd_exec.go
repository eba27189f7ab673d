package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/memtool/memtool"
)

// The bounds of one exec line, so that no input can take the process down
// or stall it for good.
const (
	// maxExecLine bounds one line of exec input: a turn of several calls,
	// each at most memtool.MaxInputBytes. A longer line is read through
	// without being kept and answered with an error.
	maxExecLine = 8 * memtool.MaxInputBytes

	// maxTurnCalls bounds the calls in one array line. A line with more is
	// refused as a whole, with one error answer, and none of its calls runs.
	maxTurnCalls = 256

	// maxAnswerBytes bounds the answers kept in one line's output: as much
	// as the Claude API's 32 MB request limit, so that an answer cut by it
	// could not have reached the model anyway. Every answer that would take
	// the line past it is replaced by a short error saying so.
	maxAnswerBytes = 32 << 20

	// defaultCallTimeout is the deadline of one call when --timeout is not
	// given: far longer than any healthy store needs, so that only a store
	// that has stopped answering reaches it.
	defaultCallTimeout = 2 * time.Minute

	// shutdownGrace is how long exec waits, after SIGINT or SIGTERM, for the
	// cancelled line in progress to be answered before it exits without
	// that answer.
	shutdownGrace = 5 * time.Second
)

// execWorkers is how many calls of one turn run at once.
func execWorkers() int { return 4 * runtime.GOMAXPROCS(0) }

func setupExec(fs *flag.FlagSet) runFunc {
	timeout := fs.Duration("timeout", defaultCallTimeout, "the deadline of each call; one that is not done by then is cancelled and changes nothing")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if *timeout <= 0 {
			return inv.usageError("--timeout must be positive, got %v", *timeout)
		}
		return runExec(ctx, inv, *timeout)
	}
}

func runExec(ctx context.Context, inv *invocation, timeout time.Duration) int {
	env := inv.env
	// exec takes SIGINT and SIGTERM itself, as chat does (see serve).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	mem, closer, sig, err := openInterruptibly(ctx, inv, sigs)
	switch {
	case sig != nil:
		return inv.fail(signalStatus(sig), "%v while opening the store", sig)
	case err != nil:
		return inv.fail(exitStore, "%v", err)
	}
	x := &execServer{mem: mem, timeout: timeout, workers: execWorkers()}
	end := x.serve(ctx, env.stdin, env.stdout, sigs)
	if end.msg != "" {
		inv.fail(end.code, "%s", end.msg)
	}
	if !end.busy {
		// A call still running when exec gives up keeps the store open:
		// closing it under that call could drop a lock the call relies
		// on. The process exit releases everything at once instead.
		closer.Close()
	}
	return end.code
}

// openInterruptibly opens the store, unless a signal comes first, which it
// returns: opening can wait for a lock another process holds, and that
// wait may not honour a context. The opening is then left to the process
// exit. exec may create the store.
func openInterruptibly(ctx context.Context, inv *invocation, sigs <-chan os.Signal) (*memtool.Memory, io.Closer, os.Signal, error) {
	type opened struct {
		mem    *memtool.Memory
		closer io.Closer
		err    error
	}
	done := make(chan opened, 1)
	go func() {
		mem, closer, err := openMemory(context.WithoutCancel(ctx), inv.env, &inv.sf, true)
		done <- opened{mem, closer, err}
	}()
	select {
	case o := <-done:
		return o.mem, o.closer, nil, o.err
	case sig := <-sigs:
		return nil, nil, sig, nil
	}
}

// An execServer answers exec lines.
type execServer struct {
	mem     *memtool.Memory
	timeout time.Duration // the deadline of each call
	workers int           // how many calls of one turn run at once
}

// An execEnd is how serving ended.
type execEnd struct {
	code int    // the exit status
	msg  string // for stderr, when there is something to say
	busy bool   // calls may still be running: the store must stay open
}

// serve answers each non-blank input line of in with one output line. An
// answer is written only after the line's calls have finished, so their
// effects are durable by then.
//
// A signal on sigs cancels the calls of the line in progress: a store call
// that honours its context stops, and Memory answers that nothing was
// changed. serve writes that line's answer and returns: with exit status 0
// if the signal cut no call short (it came between lines, or once the
// line's calls were done), and with 128 + the signal's number if it did.
// If a second signal comes first, or the line is not answered within
// shutdownGrace, serve returns without that answer, with 128 + the first
// signal's number.
//
// Only sigs stops serve: the calls run on a context that keeps ctx's values
// but not its cancellation, so that one signal cannot reach them by two
// ways at once. serve reads in on another goroutine, and leaves it behind
// if it ends while that goroutine waits for input.
func (x *execServer) serve(ctx context.Context, in io.Reader, out io.Writer, sigs <-chan os.Signal) execEnd {
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	r := bufio.NewReaderSize(in, 64<<10)
	type read struct {
		line    []byte
		tooLong bool
		err     error
	}
	reads := make(chan read, 1)
	for {
		go func() {
			line, tooLong, err := readLine(r, maxExecLine)
			reads <- read{line, tooLong, err}
		}()
		var rd read
		select {
		case rd = <-reads:
		case <-sigs:
			return execEnd{code: exitOK}
		}
		if rd.err != nil && rd.err != io.EOF {
			return execEnd{code: exitBrokenIO, msg: fmt.Sprintf("reading stdin: %v", rd.err)}
		}

		answered := make(chan lineEnd, 1)
		go func() { answered <- x.answerLine(work, out, rd.line, rd.tooLong) }()
		var sig os.Signal
		var grace <-chan time.Time
		var end lineEnd
	wait:
		for {
			select {
			case end = <-answered:
				break wait
			case s := <-sigs:
				if sig != nil {
					return execEnd{code: signalStatus(sig), busy: true,
						msg: fmt.Sprintf("a second signal (%v): the line in progress got no answer", s)}
				}
				sig = s
				cancel()
				grace = time.After(shutdownGrace)
			case <-grace:
				return execEnd{code: signalStatus(sig), busy: true,
					msg: fmt.Sprintf("%v: the line in progress did not end after it was cancelled, and got no answer", sig)}
			}
		}
		switch {
		case end.err != nil:
			return execEnd{code: exitBrokenIO, msg: end.err.Error()}
		case end.cut:
			return execEnd{code: signalStatus(sig), msg: fmt.Sprintf("%v: the line in progress was cancelled and answered", sig)}
		case sig != nil, rd.err == io.EOF:
			return execEnd{code: exitOK}
		}
	}
}

// A lineEnd is how answering one line ended.
type lineEnd struct {
	cut bool  // ctx ended before the line's calls were done
	err error // writing the answer failed
}

// answerLine runs one input line and writes its answer (none for a blank line).
func (x *execServer) answerLine(ctx context.Context, out io.Writer, line []byte, tooLong bool) lineEnd {
	var answer []byte
	var end lineEnd
	switch trimmed := bytes.TrimSpace(line); {
	case tooLong:
		answer = mustJSON(errorAnswer(fmt.Sprintf("Input line is too long: more than %d bytes", maxExecLine)))
	case len(trimmed) == 0:
		return end
	default:
		answer = x.execLine(ctx, trimmed)
		end.cut = ctx.Err() != nil
	}
	if _, err := out.Write(append(answer, '\n')); err != nil {
		end.err = fmt.Errorf("writing stdout: %w", err)
	}
	return end
}

// readLine reads one line without its newline. A line longer than limit is
// consumed without being kept and reported as tooLong.
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
func (x *execServer) execLine(ctx context.Context, line []byte) []byte {
	if line[0] != '[' {
		var budget answerBudget
		return budget.keep(x.call(ctx, line))
	}
	if tooManyCalls(line) {
		return mustJSON(errorAnswer(fmt.Sprintf("Too many tool calls in one line: more than %d; none of them was run. Send at most %d calls per line", maxTurnCalls, maxTurnCalls)))
	}
	var inputs []json.RawMessage
	if err := json.Unmarshal(line, &inputs); err != nil {
		return mustJSON(errorAnswer("Tool input is not valid JSON: " + jsonErrorText(err)))
	}
	return x.runTurn(ctx, inputs)
}

// call runs one tool input under its own deadline.
func (x *execServer) call(ctx context.Context, input []byte) memtool.Result {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	return x.mem.Run(ctx, input)
}

// runTurn runs the calls of one turn concurrently and answers them as one
// JSON array in input order. A call starts only when fewer than x.workers
// calls have started and not yet been answered, so at most that many run
// at once and at most that many results wait in memory: each is encoded,
// and dropped, as soon as it and every call before it are done.
func (x *execServer) runTurn(ctx context.Context, inputs []json.RawMessage) []byte {
	results := make([]memtool.Result, len(inputs))
	done := make([]chan struct{}, len(inputs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	slots := make(chan struct{}, x.workers) // released in input order below
	go func() {
		for i, in := range inputs {
			slots <- struct{}{}
			go func() {
				results[i] = x.call(ctx, in)
				close(done[i])
			}()
		}
	}()
	var budget answerBudget
	b := []byte{'['}
	for i := range inputs {
		<-done[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, budget.keep(results[i])...)
		results[i] = memtool.Result{}
		<-slots
	}
	return append(b, ']')
}

// An answerBudget keeps a line's answers within maxAnswerBytes.
type answerBudget struct{ used int }

// keep returns the answer to r if it fits in what is left of the budget,
// and otherwise a short error in its place that says whether the call
// itself succeeded.
func (b *answerBudget) keep(r memtool.Result) []byte {
	answer := mustJSON(r)
	if b.used+len(answer) <= maxAnswerBytes {
		b.used += len(answer)
		return answer
	}
	outcome := "succeeded"
	if r.IsError {
		outcome = "failed"
	}
	return mustJSON(errorAnswer(fmt.Sprintf("The answer to this call (%d bytes) was left out: the answers to one line may hold at most %d bytes. The call itself %s. Make fewer calls per line, or view part of a file with view_range", len(answer), maxAnswerBytes, outcome)))
}

// tooManyCalls reports whether the array line holds more than maxTurnCalls
// elements. It decodes no element past that one, so a line of millions of
// tiny calls costs no more than one of maxTurnCalls. A line that is not
// valid JSON up to there is left to json.Unmarshal to report.
func tooManyCalls(line []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return false
	}
	for n := 0; dec.More(); n++ {
		if n == maxTurnCalls {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
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
