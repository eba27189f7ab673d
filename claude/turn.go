package claude

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	memturn "github.com/memtool/memtool/internal/turn"
)

// A turn holds the memory calls of one assistant message. Each call runs
// once every earlier call of the turn whose paths overlap its own has
// finished: a model that creates a file and then edits it in the same turn
// means that order. Calls on unrelated paths do not wait for each other.
type turn struct {
	calls []turnCall
	// broken is closed when the turn's order cannot be kept (a call the
	// turn does not know arrived); every wait ends, so nothing hangs.
	broken    chan struct{}
	breakOnce sync.Once
	mu        sync.Mutex // guards the calls' answer, claimed, running and waiting, and moved
	// moved is when a call of the turn was last taken or ended.
	moved time.Time
}

// stallGrace is how long a call waits for an earlier call of its turn
// that has not arrived once no call of the turn is running, nor has one
// arrived or ended: then the earlier call is taken to be one that the
// runner will not pass to the tool (the caller took its tool away or
// replaced it, RemoveTools or AddTools, after the runner returned the
// message), and the waiting call runs. The runner starts every call of a
// turn at once, so a call that comes arrives long before.
const stallGrace = time.Second

// The SDK runner runs a message's calls again when a step is retried (its
// request failed): each such run is a new pass over the turn. A call that
// has run answers every later pass with what it answered, without running
// again; a call that did not run (its context ended first) runs in the
// next pass, after the calls it follows.
type turnCall struct {
	id     string
	input  json.RawMessage
	before []int         // earlier calls whose paths overlap this one's
	done   chan struct{} // closed when the call has run
	// answer is what the call answered once it has run: a memtool.Result,
	// or a toolAnswer for a tool of WithTools; nil until then.
	answer any
	// claimed is set once a call of the current pass has taken it, and
	// running while that call runs; waiting while it waits for the calls
	// it follows.
	claimed, running, waiting bool
	// unique is whether no other call of the turn has the same input, so
	// that the tool_use id of a runner's call is known.
	unique bool
	// raw is the tool_use block's input as the model sent it, for a call
	// to a tool of WithTools (see sequenced.Execute); nil for memory's.
	raw json.RawMessage
}

type pendingCall struct {
	id    string
	input json.RawMessage
}

func newTurn(ctx context.Context, store memtool.Store, calls []pendingCall) *turn {
	tr := &turn{calls: make([]turnCall, len(calls)), broken: make(chan struct{})}
	inputs := make([]json.RawMessage, len(calls))
	for i, c := range calls {
		inputs[i] = c.input
	}
	follows := memturn.Follows(ctx, store, inputs)
	for i, c := range calls {
		tc := &tr.calls[i]
		*tc = turnCall{id: c.id, input: c.input, before: follows[i], done: make(chan struct{}), unique: true}
		for j := range i {
			if string(calls[j].input) == string(c.input) {
				tc.unique, tr.calls[j].unique = false, false
			}
		}
	}
	return tr
}

// run runs call i of the turn once the calls it follows have finished. If
// ctx ends first, the call is not run: Memory answers that it was
// cancelled before it ran, and a later pass runs it. A call that started
// answers every later pass as it did then, whatever it answered: a change
// whose store's answer was lost when ctx ended may have been made, and
// must not be made again.
func (tr *turn) run(ctx context.Context, t *Tool, i int, id string) memtool.Result {
	if answer := tr.answered(i); answer != nil {
		return answer.(memtool.Result)
	}
	var keep any
	defer func() { tr.finish(i, keep) }()
	tr.wait(ctx, i)
	r := t.Run(ctx, id, tr.calls[i].input)
	// Whether the call started is Memory's to say: ctx may end between a
	// look at it here and Memory's own, and then nothing ran.
	if ctx.Err() == nil || !t.notStarted(ctx.Err(), tr.calls[i].input, r) {
		keep = r
	}
	return r
}

// notStarted reports whether r is Memory's answer to the command input
// when its context had ended with err before the command started, which
// runs nothing (memtool.NotStarted).
func (t *Tool) notStarted(err error, input json.RawMessage, r memtool.Result) bool {
	cmd, perr := memtool.ParseCommand(input)
	return perr == nil && r.IsError && r == memtool.NotStarted(cmd, err)
}

// answered returns what call i answered in an earlier pass, or nil.
func (tr *turn) answered(i int) any {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.calls[i].answer
}

// finish records that call i has ended, with the answer to keep; nil
// leaves it to run in the next pass, and those that wait for it to their
// own context, which ended too.
func (tr *turn) finish(i int, answer any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	c := &tr.calls[i]
	c.running = false
	tr.moved = time.Now()
	if answer != nil {
		c.answer = answer
		close(c.done)
	}
}

// wait returns once the calls that call i follows have run, the turn's
// order is broken, ctx ends, or one of them has not arrived and the turn
// has stalled (see stalled).
func (tr *turn) wait(ctx context.Context, i int) {
	tr.setWaiting(i, true)
	defer tr.setWaiting(i, false)
	for _, j := range tr.calls[i].before {
		timer := time.NewTimer(stallGrace)
	wait:
		for {
			select {
			case <-tr.calls[j].done:
				break wait
			case <-tr.broken:
				break wait
			case <-ctx.Done():
				break wait
			case <-timer.C:
				left := tr.stalled(j)
				if left <= 0 {
					break wait
				}
				timer.Reset(left)
			}
		}
		timer.Stop()
	}
}

func (tr *turn) setWaiting(i int, waiting bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.calls[i].waiting = waiting
}

// stalled returns 0 when call j has not arrived in this pass and the turn
// has stalled: no call of it runs (each that arrived has ended or waits),
// and none has arrived or ended for stallGrace. Otherwise it returns how
// long to wait before asking again. A call that waits for j then stops
// waiting for it: j may never come, and nothing would end the wait but
// ctx (RunToCompletion without a deadline would hang).
func (tr *turn) stalled(j int) time.Duration {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.calls[j].claimed {
		return stallGrace
	}
	for _, c := range tr.calls {
		if c.running && !c.waiting {
			return stallGrace
		}
	}
	return stallGrace - time.Since(tr.moved)
}

func (tr *turn) breakOrder() { tr.breakOnce.Do(func() { close(tr.broken) }) }

// runAll runs every call of the turn, unrelated ones in parallel, and
// returns their results in the order of the calls.
func (tr *turn) runAll(ctx context.Context, t *Tool) []memtool.Result {
	results := make([]memtool.Result, len(tr.calls))
	tr.mu.Lock()
	for i := range tr.calls {
		// Every call has come: none is waited for in vain.
		tr.calls[i].claimed, tr.calls[i].running = true, true
	}
	tr.mu.Unlock()
	var wg sync.WaitGroup
	for i := range tr.calls {
		wg.Go(func() { results[i] = tr.run(ctx, t, i, tr.calls[i].id) })
	}
	wg.Wait()
	return results
}

// runTurn runs one turn's calls for BetaToolResults and ToolResults.
func (t *Tool) runTurn(ctx context.Context, calls []pendingCall) []memtool.Result {
	return newTurn(ctx, t.mem.Store(), calls).runAll(ctx, t)
}

// runnerTurn builds the turn of an assistant message as the SDK's tool
// runner will run it: the memory tool_use blocks after the last "fallback"
// block, each with its input as the runner passes it, in canonical form.
func runnerTurn(msg *anthropic.BetaMessage, store memtool.Store) *turn {
	var calls []pendingCall
	for _, block := range betaMemoryCalls(msg) {
		calls = append(calls, pendingCall{id: block.ID, input: canonical(runnerInput(block))})
	}
	return newTurn(context.Background(), store, calls)
}

// runnerInput returns a tool_use block's input as the SDK runner passes it
// to a tool's Execute: decoded by the SDK and encoded again. That is not
// always block.Input's meaning under encoding/json: of a key given twice,
// the SDK keeps the first value and encoding/json the last, so the turn
// must be built from what the runner will run.
func runnerInput(block anthropic.BetaContentBlockUnion) json.RawMessage {
	input, err := json.Marshal(block.AsToolUse().Input)
	if err != nil {
		return block.Input
	}
	return input
}

// canonical returns input decoded into Go values and encoded again, so
// keys are sorted and space is gone: inputs that mean the same compare
// equal in this form, whoever encoded them.
func canonical(input json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return input
	}
	out, err := json.Marshal(v)
	if err != nil {
		return input
	}
	return out
}

// betaMemoryCalls returns the memory tool_use blocks of msg that the SDK
// runner answers: those after the last "fallback" block, whose earlier
// calls belong to an attempt that was refused.
func betaMemoryCalls(msg *anthropic.BetaMessage) []anthropic.BetaContentBlockUnion {
	var calls []anthropic.BetaContentBlockUnion
	for _, block := range afterFallback(msg.Content) {
		if block.Type == "tool_use" && block.Name == ToolName {
			calls = append(calls, block)
		}
	}
	return calls
}

// afterFallback returns the blocks after the last "fallback" block (all
// of them when there is none): the SDK runner answers only those calls.
func afterFallback(blocks []anthropic.BetaContentBlockUnion) []anthropic.BetaContentBlockUnion {
	seam := -1
	for i, block := range blocks {
		if block.Type == "fallback" {
			seam = i
		}
	}
	return blocks[seam+1:]
}

// A follower follows the SDK runner's turns: it builds each new assistant
// message's turn (with build) and hands each call the runner starts its
// place in it (claim).
type follower struct {
	lastMessage func() *anthropic.BetaMessage // nil: no turn to follow
	build       func(*anthropic.BetaMessage) *turn

	mu      sync.Mutex
	turn    *turn                  // the calls of turnMsg, as the runner runs them
	turnMsg *anthropic.BetaMessage // the runner's message that turn was built from
}

// claim finds the call of the runner's current turn whose key (its input
// in canonical form, see callKey) is key, and marks it taken. It returns
// a nil turn when there is no turn to follow, and breaks the turn's order
// when key is none of its calls, so that no call waits for one that will
// not come.
func (f *follower) claim(key json.RawMessage) (*turn, int) {
	if f.lastMessage == nil {
		return nil, -1
	}
	msg := f.lastMessage()
	if msg == nil {
		return nil, -1
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.turnMsg != msg {
		if f.turn != nil {
			f.turn.breakOrder()
		}
		f.turn, f.turnMsg = f.build(msg), msg
	}
	if i := f.turn.take(key); i >= 0 {
		return f.turn, i
	}
	if f.turn.has(key) {
		// Every call with this key has been taken: the runner is running
		// the same message's calls again (a step retried after a failed
		// request), a new pass over the turn.
		f.turn.newPass()
		if i := f.turn.take(key); i >= 0 {
			return f.turn, i
		}
	}
	f.turn.breakOrder()
	return nil, -1
}

// newPass starts a new pass over the turn: every call that is not running
// can be taken again.
func (tr *turn) newPass() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for i := range tr.calls {
		if c := &tr.calls[i]; !c.running {
			c.claimed = false
		}
	}
}

// take marks the first call of this pass with this input as taken and
// returns its index, or -1.
func (tr *turn) take(input json.RawMessage) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for i := range tr.calls {
		if c := &tr.calls[i]; !c.claimed && string(c.input) == string(input) {
			c.claimed, c.running = true, c.answer == nil
			tr.moved = time.Now()
			return i
		}
	}
	return -1
}

func (tr *turn) has(input json.RawMessage) bool {
	for _, c := range tr.calls {
		if string(c.input) == string(input) {
			return true
		}
	}
	return false
}
