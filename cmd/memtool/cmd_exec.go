package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
)

// The bounds of one exec line (package turn has the reasons), so that no
// input can take the process down or stall it for good.
const (
	maxExecLine    = turn.MaxLine
	maxTurnCalls   = turn.MaxCalls
	maxAnswerBytes = turn.MaxAnswerBytes

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
	if sig := signalOf(ctx); sig != nil {
		// It came while exec started, before it listened: no line was
		// read, so none is left without its answer.
		return inv.fail(signalStatus(sig), "%v before the first line", sig)
	}

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
// ways at once. serve reads and answers lines on another goroutine, and
// leaves it behind if it ends while that goroutine waits for input; a
// line read after that is not answered.
func (x *execServer) serve(ctx context.Context, in io.Reader, out io.Writer, sigs <-chan os.Signal) execEnd {
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	l := &execLoop{ended: make(chan execEnd, 1)}
	go l.run(work, x, in, out)
	var sig os.Signal
	var grace <-chan time.Time
	for {
		select {
		case end := <-l.ended:
			return end
		case s := <-sigs:
			if sig != nil {
				return execEnd{code: signalStatus(sig), busy: true,
					msg: fmt.Sprintf("a second signal (%v): the line in progress got no answer", s)}
			}
			if !l.signalled(s) {
				return execEnd{code: exitOK}
			}
			sig = s
			cancel()
			grace = time.After(shutdownGrace)
		case <-grace:
			return execEnd{code: signalStatus(sig), busy: true,
				msg: fmt.Sprintf("%v: the line in progress did not end after it was cancelled, and got no answer", sig)}
		}
	}
}

// An execLoop reads and answers lines, one after another, on one
// goroutine: a line costs no hand-over between goroutines, only two
// uncontended locks. serve learns of the loop's end on ended, and tells
// the loop of a signal through signalled.
type execLoop struct {
	ended chan execEnd // receives the loop's one end; buffered

	mu        sync.Mutex
	answering bool      // a line has been read and is not answered yet
	stopped   bool      // serve has returned: answer no more lines
	sig       os.Signal // the signal that came while a line was answered
}

// signalled tells the loop of sig. If a line is being answered, it
// returns true, and the loop ends once that line is answered. Otherwise it
// returns false, and the loop answers no further line.
func (l *execLoop) signalled(sig os.Signal) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.answering {
		l.stopped = true
		return false
	}
	l.sig = sig
	return true
}

// run reads and answers lines until input ends, I/O fails, or a signal
// came while a line was being answered; it sends how it ended on l.ended.
func (l *execLoop) run(ctx context.Context, x *execServer, in io.Reader, out io.Writer) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, maxExecLine)
		l.mu.Lock()
		if l.stopped {
			l.mu.Unlock()
			return
		}
		l.answering = true
		l.mu.Unlock()
		if err != nil && err != io.EOF {
			l.ended <- execEnd{code: exitBrokenIO, msg: fmt.Sprintf("reading stdin: %v", err)}
			return
		}
		end := x.answerLine(ctx, out, line, tooLong)
		l.mu.Lock()
		l.answering = false
		sig := l.sig
		l.mu.Unlock()
		switch {
		case end.err != nil:
			l.ended <- execEnd{code: exitBrokenIO, msg: end.err.Error()}
			return
		case end.cut:
			l.ended <- execEnd{code: signalStatus(sig), msg: fmt.Sprintf("%v: the line in progress was cancelled and answered", sig)}
			return
		case sig != nil, err == io.EOF:
			l.ended <- execEnd{code: exitOK}
			return
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
		answer = turn.TooLong()
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
		n := len(chunk) // of the line, without its newline
		if err == nil {
			n--
		}
		if !tooLong {
			if len(line)+n > limit {
				tooLong, line = true, nil
			} else {
				line = appendDoubling(line, chunk[:n], limit)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// appendDoubling appends chunk to line, doubling line's room when it
// must grow, up to most bytes unless chunk needs more. append grows a
// large slice by a quarter at a time: reading a line of 64 MiB so leaves
// about 320 MiB of copies for the collector, and the heap grows with
// them; doubling leaves 64 MiB.
func appendDoubling(line, chunk []byte, most int) []byte {
	if need := len(line) + len(chunk); need > cap(line) {
		grown := make([]byte, len(line), max(min(2*cap(line), most), need, 4<<10))
		copy(grown, line)
		line = grown
	}
	return append(line, chunk...)
}

// execLine runs one object, or an array of objects concurrently: what
// POST /v1/memory of memtool serve runs too.
func (x *execServer) execLine(ctx context.Context, line []byte) []byte {
	r := turn.Runner{Mem: x.mem, Timeout: x.timeout, Workers: x.workers}
	return r.Line(ctx, line)
}
