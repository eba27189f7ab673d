package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/mcpserver"
)

const mcpAbout = `Serves the memory as an MCP server on stdin and stdout, for one client
that starts this process (Claude Desktop, Claude Code, the Agent SDK, any
MCP client). Tools: memory_view, memory_create, memory_str_replace,
memory_insert, memory_delete, memory_rename (their answers are exactly
memtool exec's) and memory_search (memtool search's matches). The files
are also MCP resources (memory:///memories/...). Stdout carries the protocol alone; logs go to stderr.
Several processes may serve one store at once.`

func setupMCP(fs *flag.FlagSet) runFunc {
	timeout := fs.Duration("timeout", mcpserver.DefaultCallTimeout, "the deadline of each tool call; one that is not done by then is cancelled and changes nothing")
	readOnly := fs.Bool("read-only", false, "offer memory_view and memory_search alone, so the client cannot change the memory")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if *timeout <= 0 {
			return inv.usageError("--timeout must be positive, got %v", *timeout)
		}
		if *readOnly && inv.sf.overwrite {
			return inv.usageError("--overwrite changes what memory_create does, and --read-only offers no memory_create: use one or the other")
		}
		return runMCP(ctx, inv, &mcpserver.Options{ReadOnly: *readOnly, CallTimeout: *timeout})
	}
}

// runMCP serves the memory on stdio until the client closes stdin or a
// signal cancels ctx. The calls in progress are then finished (each within
// its timeout) before the store is closed; a second SIGINT or SIGTERM
// meanwhile ends memtool at once, with 128 + its number, leaving those
// calls unanswered.
func runMCP(ctx context.Context, inv *invocation, opts *mcpserver.Options) int {
	env := inv.env
	// The signal that cancels ctx arrives here too; the one after it
	// forces the exit.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// A read-only server never writes, so it does not create a store.
	mem, closer, err := openMemory(ctx, env, &inv.sf, !opts.ReadOnly)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	if bi, _ := debug.ReadBuildInfo(); stamped(bi, version) != nil {
		opts.Version = stamped(bi, version).Main.Version
	}
	opts.Logger = slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in, ok := env.stdin.(io.ReadCloser) // closed to stop the reader on a signal
	if !ok {
		in = io.NopCloser(env.stdin)
	}
	stdin := &eofReader{ReadCloser: in}
	transport := &drainingTransport{
		Transport: mcpserver.NewIOTransport(stdin, nopWriteCloser{env.stdout}),
		// A call is answered within its timeout; this bounds the wait for
		// one the SDK never answers.
		wait: opts.CallTimeout + shutdownGrace,
	}
	session, err := mcpserver.NewServer(mem, opts).Connect(ctx, transport, nil)
	if err != nil {
		closer.Close()
		return inv.fail(exitBrokenIO, "%v", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- session.Wait() }()
	select {
	case <-ctx.Done():
	case err := <-ended:
		closer.Close()
		// The client closing stdin is the normal end, even if the SDK
		// reports that answers or requests were cut short by it.
		if err != nil && !stdin.eof.Load() {
			return inv.fail(exitFailed, "the session ended: %v", err)
		}
		return exitOK
	}
	closed := make(chan struct{})
	go func() {
		session.Close() // waits for the calls in progress
		<-ended
		close(closed)
	}()
	for seen := 0; ; {
		select {
		case <-closed:
			closer.Close()
			return exitOK
		case sig := <-sigs:
			if seen++; seen == 1 {
				inv.fail(exitOK, "%v: finishing the calls in progress; a second signal ends memtool at once", sig)
				continue
			}
			// The calls still running keep the store open: closing it
			// under them could drop a lock they rely on. The exit
			// releases everything at once instead.
			return inv.fail(signalStatus(sig), "a second signal (%v): the calls in progress got no answer", sig)
		}
	}
}

// eofReader records that stdin reached its end: the client is gone.
type eofReader struct {
	io.ReadCloser
	eof atomic.Bool
}

func (r *eofReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF {
		r.eof.Store(true)
	}
	return n, err
}

// nopWriteCloser is stdout for the transport, which closes its writer at
// the end of the session: stdout stays open for main.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// drainingTransport is stdio that answers every request read before stdin
// ended (or before a line that is not JSON-RPC, which ends the session): a client may write its requests and close stdin at once
// (printf ... | memtool mcp), and the SDK, which ends the session at end of
// input, would otherwise drop the answers not yet written.
type drainingTransport struct {
	mcp.Transport
	wait time.Duration // the longest wait for the answers at end of input
}

func (t *drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainingConn{Connection: c, wait: t.wait, changed: make(chan struct{}), closed: make(chan struct{})}, nil
}

type drainingConn struct {
	mcp.Connection
	wait      time.Duration
	mu        sync.Mutex
	pending   int           // requests read and not yet answered
	changed   chan struct{} // closed and replaced when pending changes
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.IsCall() {
		c.add(1)
	}
	if err != nil {
		c.drain(ctx) // the reader is done: at end of input, or at input that is not JSON-RPC
	}
	return msg, err
}

func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.add(-1)
	}
	return err
}

func (c *drainingConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

func (c *drainingConn) add(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending += n
	close(c.changed)
	c.changed = make(chan struct{})
}

// drain waits until every request read has been answered.
func (c *drainingConn) drain(ctx context.Context) {
	timeout := time.After(c.wait)
	for {
		c.mu.Lock()
		pending, changed := c.pending, c.changed
		c.mu.Unlock()
		if pending <= 0 {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			return
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}
