//go:build claude

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/storeurl"
)

// notRunText answers the calls of a turn that stopped before they ran.
const notRunText = "Error: This call was not run, or its result was lost: the turn was stopped " +
	"(by the user, or at the request limit). View the memory directory to see what changed."

func setupChat(fs *flag.FlagSet) runFunc {
	var af agentFlags
	addAgentFlags(fs, &af)
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		return runChat(ctx, inv, &af)
	}
}

func runChat(ctx context.Context, inv *invocation, af *agentFlags) int {
	env, sf := inv.env, &inv.sf
	opts, client, mem, closer, code := startAgent(ctx, inv, af)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	c := &chat{env: env, client: client, mem: mem, af: af, opts: opts}

	// Ctrl-C ends the turn in progress, not the chat. The chat takes SIGINT
	// itself and runs on a context that main's signal handling, which ends
	// other commands on Ctrl-C, does not cancel. SIGTERM ends the chat.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	base := context.WithoutCancel(ctx)

	lines := make(chan string)
	stop := make(chan struct{})
	defer close(stop)
	var readErr error // set before lines is closed
	go readLines(env.stdin, lines, stop, &readErr)

	fmt.Fprintf(env.stderr, "memtool chat with %s; memory in %s. Ctrl-C ends a turn; Ctrl-D or /exit ends the chat.\n",
		af.model, storeurl.Redact(storeURL(sf.store, env)))
	status := exitOK
	for {
		fmt.Fprint(env.stderr, "> ")
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(env.stderr)
				if readErr != nil {
					return inv.fail(exitBrokenIO, "reading stdin: %v", readErr)
				}
				return status
			}
			line = l
		case sig := <-sigs:
			if sig == syscall.SIGTERM {
				fmt.Fprintln(env.stderr)
				return status
			}
			fmt.Fprintln(env.stderr, "\n(Ctrl-D or /exit ends the chat)")
			continue
		}
		switch strings.TrimSpace(line) {
		case "":
			continue
		case "/exit", "/quit":
			return status
		case "/help":
			// Answered here: a chat command is never sent to Claude.
			fmt.Fprintln(env.stderr, chatAbout)
			continue
		}
		code, terminated := c.turn(base, sigs, line)
		if code != exitOK {
			status = code
		}
		if terminated {
			return status
		}
	}
}

// readLines sends each line of r to lines and closes it at the end of r,
// or at a line it cannot read (one longer than 1 MiB, or a read error),
// having set *err to why: not the end of the chat the user asked for.
func readLines(r io.Reader, lines chan<- string, stop <-chan struct{}, err *error) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		select {
		case lines <- sc.Text():
		case <-stop:
			return
		}
	}
	if *err = sc.Err(); errors.Is(*err, bufio.ErrTooLong) {
		*err = errors.New("a line longer than 1 MiB")
	}
}

// chat is one conversation: what was said, and what the next user message
// must carry first (the answers to calls of a turn that was cut short).
type chat struct {
	env     *cliEnv
	client  anthropic.Client
	mem     *memtool.Memory
	af      *agentFlags
	opts    []claude.Option
	history []anthropic.BetaMessageParam
	pending []anthropic.BetaContentBlockParamUnion
}

// turn sends one user message and streams the reply, running memory calls
// until Claude has answered. A signal on sigs cancels the turn; terminated
// reports SIGTERM.
func (c *chat) turn(base context.Context, sigs <-chan os.Signal, text string) (code int, terminated bool) {
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	var sig os.Signal
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case sig = <-sigs:
			cancel()
		case <-done:
		}
	}()
	final, requests, dropped, err := c.send(ctx, text)
	close(done)
	<-watched

	switch {
	case sig == syscall.SIGTERM:
		return exitOK, true
	case sig != nil && err != nil:
		fmt.Fprintln(c.env.stderr, "(interrupted; memory keeps what was done)")
		return exitOK, false
	case err != nil:
		code = apiFailure(ctx, c.env, "chat", err)
	default:
		code = finished(c.env, "chat", final, requests)
	}
	if dropped {
		fmt.Fprintln(c.env.stderr, "memtool chat: that message was dropped from the conversation; the next one is sent without it")
	}
	return code, false
}

// send runs one turn and leaves the conversation ready for the next one,
// also when the turn was cut short. dropped reports that the user's text
// of a turn that ended unanswered was left out of it (see carryText).
func (c *chat) send(ctx context.Context, text string) (final *anthropic.BetaMessage, requests int, dropped bool, err error) {
	blocks := append(slices.Clone(c.pending), anthropic.NewBetaTextBlock(text))
	messages := append(slices.Clone(c.history), anthropic.NewBetaUserMessage(blocks...))
	runner := claude.NewStreamingRunner(&c.client, c.mem, c.af.params(messages), c.opts...)
	out := &textOut{w: c.env.stdout, terminal: c.env.stdoutTerminal}
turns:
	for events := range runner.AllStreaming(ctx) {
		for ev, e := range events {
			if e != nil {
				err = e
				break turns
			}
			switch ev.Type {
			case "content_block_start":
				if ev.ContentBlock.Type == "text" {
					out.paragraph()
				}
			case "content_block_delta":
				if ev.Delta.Type == "text_delta" {
					out.write(ev.Delta.Text)
				}
			case "message_stop":
				out.endLine()
			}
		}
	}
	out.endLine()
	final = runner.LastMessage()
	c.history, c.pending, dropped = settle(runner.Messages(), carryText(ctx, final, err))
	return final, runner.IterationCount(), dropped, err
}

// carryText reports whether the user's text of a turn that ended with err
// and final, if it went unanswered, goes with the next message: when the
// turn was interrupted, or failed in a way that trying again can mend (a
// network error or timeout, 408, 409, 429, a 5xx). After a refusal (with
// threads, the SDK leaves the refused reply out of the history) or an API
// error that would come again (another 4xx, such as a prompt that is too
// long) it does not: every later message would carry it, and fail or be
// refused the same way.
func carryText(ctx context.Context, final *anthropic.BetaMessage, err error) bool {
	if err == nil {
		return final == nil || final.StopReason != anthropic.BetaStopReasonRefusal
	}
	if ctx.Err() != nil {
		return true
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return true
	}
	switch code := apiErr.StatusCode; {
	case code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooManyRequests, code >= 500:
		return true
	}
	return false
}

// settle splits a conversation that may have been cut short into the
// history to send again and the blocks the next user message must start
// with: a trailing user message goes back to pending (only its
// tool_result blocks unless keepText), and the calls of a trailing
// assistant message that have no result get notRunText. dropped reports
// that blocks besides tool results were left out.
func settle(msgs []anthropic.BetaMessageParam, keepText bool) (history []anthropic.BetaMessageParam, pending []anthropic.BetaContentBlockParamUnion, dropped bool) {
	if n := len(msgs); n > 0 && msgs[n-1].OfUser != nil {
		for _, b := range msgs[n-1].OfUser.Content {
			if keepText || b.OfToolResult != nil {
				pending = append(pending, b)
			} else {
				dropped = true
			}
		}
		msgs = msgs[:n-1]
	}
	if n := len(msgs); n > 0 && msgs[n-1].OfAssistant != nil {
		answered := map[string]bool{}
		for _, b := range pending {
			if b.OfToolResult != nil {
				answered[b.OfToolResult.ToolUseID] = true
			}
		}
		for _, b := range msgs[n-1].OfAssistant.Content {
			if b.OfToolUse != nil && !answered[b.OfToolUse.ID] {
				r := anthropic.NewBetaToolResultTextBlockParam(b.OfToolUse.ID, notRunText, true)
				pending = append(pending, anthropic.BetaContentBlockParamUnion{OfToolResult: &r})
			}
		}
	}
	return msgs, pending, dropped
}

// redactedError is err with the userinfo of every URL in its text masked,
// and the password of base (ANTHROPIC_BASE_URL) wherever it is: the SDK's
// error quotes the request's URL, user:password@ included.
type redactedError struct {
	err  error
	base string
}

func (e redactedError) Error() string {
	return storeurl.Redact(maskUserinfo(e.err.Error()), e.base)
}

func (e redactedError) Unwrap() error { return e.err }

// maskUserinfo returns s with the userinfo of every URL in it (what comes
// between "://" and the last '@' of the authority) masked.
func maskUserinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?#\"'` \t\r\n")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			b.WriteString(storeurl.Masked)
			s = s[at:]
		}
	}
	b.WriteString(s)
	return b.String()
}

// textOut writes streamed text, keeping track of where the line is. On a
// terminal the text is shown as terminalSafe shows it: each delta is
// whole UTF-8 (decoded from JSON), so escaping it delta by delta escapes
// every control character however the text was cut.
type textOut struct {
	w        io.Writer
	terminal bool
	wrote    bool // anything written in this turn
	midLine  bool
}

func (o *textOut) write(s string) {
	if s == "" {
		return
	}
	if o.terminal {
		io.WriteString(o.w, terminalSafe(s))
	} else {
		io.WriteString(o.w, s)
	}
	o.wrote = true
	o.midLine = !strings.HasSuffix(s, "\n")
}

// paragraph separates a new text block from text written before it.
func (o *textOut) paragraph() {
	if o.wrote {
		o.endLine()
		io.WriteString(o.w, "\n")
	}
}

func (o *textOut) endLine() {
	if o.midLine {
		io.WriteString(o.w, "\n")
		o.midLine = false
	}
}
