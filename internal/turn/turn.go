// Package turn answers one line of tool inputs, as memtool exec and the
// memtool server's POST /v1/memory both do: one JSON object, or an array
// of them (one turn, run concurrently), answered with the JSON of its
// result or an array of them in input order, within the bounds below. Both
// share this one implementation, so their answers are the same bytes.
//
// Calls of one turn whose paths overlap (see Follows; also through a
// link in a directory store, as the store resolves them) run one after
// another in the order they were written, so a create and then an edit of
// that file, or a rename and then a view of the new name, mean what they
// would one call at a time; calls on unrelated paths run at the same time.
package turn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtool/memtool"
)

// The bounds of one line, so that no input can take the process down or
// stall it for good.
const (
	// MaxLine bounds one line: a turn of several calls, each at most
	// memtool.MaxInputBytes.
	MaxLine = 8 * memtool.MaxInputBytes

	// MaxCalls bounds the calls in one array line. A line with more is
	// refused as a whole, with one error answer, and none of its calls runs.
	MaxCalls = 256

	// MaxAnswerBytes bounds the answers kept in one line's output: as much
	// as the Claude API's 32 MB request limit, so that an answer cut by it
	// could not have reached the model anyway. Every answer that would take
	// the line past it is replaced by a short error saying so.
	MaxAnswerBytes = 32 << 20
)

// A Runner answers lines on one Memory.
type Runner struct {
	Mem     *memtool.Memory
	Timeout time.Duration // the deadline of each call
	Workers int           // how many calls of one turn run at once
}

// TooLong is the answer to a line longer than MaxLine.
func TooLong() []byte {
	return mustJSON(errorAnswer(fmt.Sprintf("Input line is too long: more than %d bytes", MaxLine)))
}

// Line runs one line (not blank, without surrounding space): an object,
// or an array of objects concurrently. It returns the answer, without a
// newline, once every call is done.
func (x *Runner) Line(ctx context.Context, line []byte) []byte {
	if line[0] != '[' {
		var budget answerBudget
		return budget.keep(x.call(ctx, line, nil))
	}
	if tooManyCalls(line) {
		return mustJSON(errorAnswer(fmt.Sprintf("Too many tool calls in one line: more than %d; none of them was run. Send at most %d calls per line", MaxCalls, MaxCalls)))
	}
	var inputs []json.RawMessage
	if err := json.Unmarshal(line, &inputs); err != nil {
		return mustJSON(errorAnswer("Tool input is not valid JSON: " + jsonErrorText(err)))
	}
	return x.runTurn(ctx, inputs)
}

// call runs one tool input, parsed as cmd if not nil, under its own
// deadline, which starts when the call does.
func (x *Runner) call(ctx context.Context, input []byte, cmd memtool.Command) memtool.Result {
	ctx, cancel := context.WithTimeout(ctx, x.Timeout)
	defer cancel()
	if cmd != nil {
		return x.Mem.Execute(ctx, cmd)
	}
	return x.Mem.Run(ctx, input) // answers why it does not parse
}

// runTurn runs the calls of one turn concurrently and answers them as one
// JSON array in input order. A call starts only when fewer than x.Workers
// calls have started and not yet been answered, so at most that many run
// at once and at most that many results wait in memory: each is encoded,
// and dropped, as soon as it and every call before it are done. A call
// whose paths overlap an earlier call's runs once that one is done (slots
// are taken in input order, so the earlier call has always started); if
// ctx ends first, it is answered as cancelled before it ran.
func (x *Runner) runTurn(ctx context.Context, inputs []json.RawMessage) []byte {
	results := make([]memtool.Result, len(inputs))
	done := make([]chan struct{}, len(inputs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	cmds := parse(inputs) // once, for the order and for the calls
	follows := follows(ctx, x.Mem.Store(), cmds)
	slots := make(chan struct{}, max(x.Workers, 1)) // released in input order below
	go func() {
		for i, in := range inputs {
			slots <- struct{}{}
			go func() {
				defer close(done[i])
				for _, j := range follows[i] {
					select {
					case <-done[j]:
					case <-ctx.Done():
					}
				}
				results[i] = x.call(ctx, in, cmds[i])
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

// An answerBudget keeps a line's answers within MaxAnswerBytes.
type answerBudget struct{ used int }

// keep returns the answer to r if it fits in what is left of the budget,
// and otherwise a short error in its place that says whether the call
// itself succeeded or may or may not have made its change, or else
// quotes the call's own error (up to maxKeptError bytes), which says
// what it did.
func (b *answerBudget) keep(r memtool.Result) []byte {
	answer := mustJSON(r)
	if b.used+len(answer) <= MaxAnswerBytes {
		b.used += len(answer)
		return answer
	}
	leftOut := fmt.Sprintf("The answer to this call (%d bytes) was left out: the answers to one line may hold at most %d bytes.", len(answer), MaxAnswerBytes)
	const advice = "Make fewer calls per line, or view part of a file with view_range"
	switch {
	case !r.IsError:
		return mustJSON(errorAnswer(leftOut + " The call itself succeeded. " + advice))
	case strings.Contains(r.Text, outcomeUnknown):
		// "failed" would tell the model that nothing changed.
		return mustJSON(errorAnswer(leftOut + " The call itself may or may not have made its change: the memory store's answer was lost. View its path before trying again. " + advice))
	}
	// Not "failed" alone: a call done in part (a directory removed or
	// moved entry by entry until the store failed) changed something, and
	// its own error says so, as a policy's or store's refusal says what it
	// did.
	return mustJSON(errorAnswer(leftOut + " " + advice + ". The call's own answer was an error: " + head(r.Text, maxKeptError)))
}

// maxKeptError bounds the part of a call's error an answer left out
// keeps: enough for two paths of memtool.MaxPathBytes and the words
// around them. So the answers left out of a line hold at most MaxCalls
// times some 25 KiB (4 KiB of control characters, escaped, and the rest).
const maxKeptError = 4 << 10

// head returns s cut to at most n bytes, on a character boundary, with
// "…" at the end when it was cut.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// outcomeUnknown is in Memory's answer to a change whose outcome is
// unknown (memtool.ErrOutcomeUnknown). An error that merely quotes it is
// taken for one too, which only asks the model to look.
const outcomeUnknown = " may or may not have been made: the memory store's answer was lost."

// tooManyCalls reports whether the array line holds more than MaxCalls
// elements. It decodes no element past that one, so a line of millions of
// tiny calls costs no more than one of MaxCalls. A line that is not
// valid JSON up to there is left to json.Unmarshal to report.
func tooManyCalls(line []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return false
	}
	for n := 0; dec.More(); n++ {
		if n == MaxCalls {
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
