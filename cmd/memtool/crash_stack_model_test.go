package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/encrypt"
	versions "github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
)

// The model of TestCrashStack*: files that one client changes one command
// at a time, under the whole policy stack, while memtool is killed.

// csAbsent is the state of a file that is not there.
const csAbsent = "\x00absent"

// csPolicy stacks every policy; history keeps enough versions that none
// of this test's is dropped, so each acknowledged change's version stays.
func csPolicy(auditLog string) string {
	return fmt.Sprintf(`{"limits":{"max_file_size":40000,"max_files":400,"max_bytes":20000000},"secrets":"reject","audit":%q,"encrypt":true,"expiry":true,"history":{"max_versions":1000,"max_bytes":1000000000}}`, auditLog)
}

// A csFile is one file's history of commands. states[0] is its state at
// the start of a round, states[k] after the round's k-th command; acked
// is the last state an answer confirmed.
type csFile struct {
	path     string // virtual, /memories/…
	gen      int
	states   []string
	acked    int
	changed  []bool          // changed[k]: the k-th command changes the file (not a refusal)
	ever     map[string]bool // every content any command sent could leave
	replaced map[string]bool // contents a change made replaced (true: answered): history keeps each
	changes  int             // acknowledged changes, every round (the audit log names each)
}

func newCSFile(path string) *csFile {
	return &csFile{path: path, states: []string{csAbsent}, ever: map[string]bool{}, replaced: map[string]bool{}}
}

func (f *csFile) name() string { return strings.TrimPrefix(f.path, "/memories/") }
func (f *csFile) cur() string  { return f.states[len(f.states)-1] }

// next returns the file's next command and whether it is to be refused
// (a secret, or a file over limits.max_file_size), changing nothing.
func (f *csFile) next(rng *rand.Rand) (cmd map[string]any, refused bool) {
	cur, nxt := f.cur(), ""
	switch r := rng.IntN(10); {
	case cur == csAbsent && r == 0:
		cmd, refused, nxt = map[string]any{"command": "create", "path": f.path, "file_text": strings.Repeat("x", 40001)}, true, cur
	case cur == csAbsent:
		f.gen++
		nxt = fmt.Sprintf("%s gen %d\n%s", f.path, f.gen, csBody(rng))
		cmd = map[string]any{"command": "create", "path": f.path, "file_text": nxt}
	case r == 0:
		cmd, refused, nxt = map[string]any{"command": "insert", "path": f.path, "insert_line": 1, "insert_text": "key AKIAIOSFODNN7EXAMPLE\n"}, true, cur
	case r <= 2:
		cmd, nxt = map[string]any{"command": "delete", "path": f.path}, csAbsent
	case r <= 5:
		f.gen++
		head, rest, _ := strings.Cut(cur, "\n")
		nh := fmt.Sprintf("%s gen %d", f.path, f.gen)
		cmd, nxt = map[string]any{"command": "str_replace", "path": f.path, "old_str": head + "\n", "new_str": nh + "\n"}, nh+"\n"+rest
	default:
		f.gen++
		line := fmt.Sprintf("insert %d", f.gen)
		head, rest, _ := strings.Cut(cur, "\n")
		cmd, nxt = map[string]any{"command": "insert", "path": f.path, "insert_line": 1, "insert_text": line}, head+"\n"+line+"\n"+rest
	}
	f.states = append(f.states, nxt)
	f.changed = append(f.changed, !refused)
	f.ever[nxt] = true
	return cmd, refused
}

// csBody is up to 24 KB of lines of letters: big enough that a torn write
// would show, small enough for limits.max_file_size.
func csBody(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(300) {
		for range 79 {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ack records that the k-th command of the round (from 1) was answered
// done (or refused, for a refused one); answered false: found done after
// the kill, though unanswered (its version is kept, but the audit log may
// not name it: the process may have died before it logged it).
func (f *csFile) ack(k int, answered bool) {
	if k <= f.acked {
		return
	}
	for j := f.acked + 1; j <= k; j++ {
		if f.changed[j-1] {
			if answered {
				f.changes++
			}
			if prev := f.states[j-1]; prev != csAbsent {
				f.replaced[prev] = f.replaced[prev] || answered
			}
		}
	}
	f.acked = k
}

// settle checks the state the reopened store holds against the round's
// commands, and starts the next round from it: it must be the state of the
// last acknowledged command or of a later one that was sent.
func (f *csFile) settle(t *testing.T, got string) {
	t.Helper()
	for j := f.acked; j < len(f.states); j++ {
		if f.states[j] == got {
			f.ack(j, false)
			f.states, f.changed, f.acked = []string{got}, nil, 0
			return
		}
	}
	t.Errorf("%s holds %s: not the state of its last acknowledged command (%d of %d sent) nor of a later one", f.path, csShow(got), f.acked, len(f.states)-1)
	f.states, f.changed, f.acked = []string{got}, nil, 0
}

func csShow(s string) string {
	if s == csAbsent {
		return "no file"
	}
	head, _, _ := strings.Cut(s, "\n")
	return fmt.Sprintf("%q… (%d bytes)", head, len(s))
}

// csStore makes be's store for a crash test of the whole policy stack:
// its URL, the audit log's path, and the environment that gives the
// policy (csPolicy) and its key.
func csStore(t *testing.T, be backendtest.Backend) (url, auditLog string, env []string) {
	url = be.URL(t)
	auditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	key, _ := encrypt.NewKey("k1")
	return url, auditLog, policyEnv(t, csPolicy(auditLog), key)
}

// csCheck opens the store as memtool does, with the policy in env, and
// checks every file (through the whole stack: it decrypts), the refused
// paths (never made), history and the audit log. A delete killed after it
// moved its file into history's trash and before it numbered the version
// is numbered by the next change (history's sweep): with listed false,
// csCheck makes one change first if a version is missing; with listed, a
// version missing before it is an error too, as `memtool history` lists it.
func csCheck(t *testing.T, url, tenant string, env []string, files []*csFile, refusedPaths []string, auditLog string, listed bool) {
	t.Helper()
	ctx := context.Background()
	st, closer := csOpen(t, url, tenant, env)
	defer closer.Close()
	for _, f := range files {
		data, err := st.top.ReadFile(ctx, f.name(), 1<<20)
		got := string(data)
		if errors.Is(err, fs.ErrNotExist) {
			got = csAbsent
		} else if err != nil {
			t.Errorf("read %s: %v", f.path, err)
			continue
		}
		f.settle(t, got)
	}
	var missing []string
	for _, f := range files {
		missing = append(missing, csVersions(t, st, f)...)
	}
	if len(missing) > 0 {
		if listed {
			t.Errorf("after the kill, history lists no version of what a change replaced:\n%s", strings.Join(missing, "\n"))
		}
		if err := st.top.WriteFile(ctx, "cs/sweep.md", []byte("sweep"), memtool.CreateOnly); err == nil {
			st.top.Remove(ctx, "cs/sweep.md") // a delete finishes those waiting in the trash
		}
		for _, f := range files {
			for _, m := range csVersions(t, st, f) {
				t.Errorf("%s (after a change that sweeps history's trash too)", m)
			}
		}
	}
	for _, p := range refusedPaths {
		if _, err := st.top.Stat(ctx, strings.TrimPrefix(p, "/memories/")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s, whose every create was refused, is there (%v)", p, err)
		}
	}
	csCheckAudit(t, auditLog, files)
}

// csVersions checks f's versions: each holds what some command sent, and
// they hold every content a change replaced. It returns what they lack.
func csVersions(t *testing.T, st *policyStack, f *csFile) (missing []string) {
	t.Helper()
	ctx := context.Background()
	st.settleHistory(ctx) // as memtool history does
	vs, err := versions.Versions(ctx, st.belowHistory, f.path)
	if err != nil {
		t.Errorf("versions of %s: %v", f.path, err)
		return nil
	}
	kept := map[string]bool{}
	var have []string
	for _, v := range vs {
		have = append(have, fmt.Sprintf("%d %s %d bytes", v.N, v.Op, v.Size))
		data, err := versions.Read(ctx, st.belowHistory, f.path, v.N)
		if err != nil {
			t.Errorf("version %d of %s: %v", v.N, f.path, err)
			continue
		}
		kept[string(data)] = true
		if !f.ever[string(data)] {
			t.Errorf("version %d of %s holds %s, which no command sent", v.N, f.path, csShow(string(data)))
		}
	}
	for c, answered := range f.replaced {
		if !kept[c] {
			missing = append(missing, fmt.Sprintf("%s: a change (answered: %v) replaced %s, and history keeps no version of it (it keeps %q; the file holds %s)", f.path, answered, csShow(c), have, csShow(f.cur())))
		}
	}
	return missing
}

// csOpen opens the store at url (its tenant's memory, if tenant is not
// empty) with the policy and keys of env, in this process; the caller
// closes it.
func csOpen(t *testing.T, url, tenant string, env []string) (*policyStack, io.Closer) {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cli := &cliEnv{stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	_, st, closer, err := openStack(context.Background(), cli, &storeFlags{store: url, tenant: tenant}, true)
	if err != nil {
		t.Fatalf("reopen %s: %v", url, err)
	}
	return st, closer
}

// csCheckAudit checks that the audit log names, with outcome ok, at least
// as many changes of each file as were acknowledged. The audit policy
// writes its line when the store's operation returns, before memtool
// answers, so an acknowledged change's line is in the log.
func csCheckAudit(t *testing.T, auditLog string, files []*csFile) {
	t.Helper()
	f, err := os.Open(auditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	logged := map[string]int{}
	err = audit.Read(f, audit.Filter{}, func(e audit.Entry) error {
		switch e.Op {
		case "create", "update", "remove", "write":
			if e.Outcome == "ok" {
				logged[e.Path]++
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("audit log: %v", err)
	}
	for _, f := range files {
		if logged[f.path] < f.changes {
			t.Errorf("the audit log names %d changes of %s; %d were acknowledged", logged[f.path], f.path, f.changes)
		}
	}
}

// csAnswer is one tool result as memtool exec and serve write it.
type csAnswer struct {
	IsError bool   `json:"is_error"`
	Content string `json:"content"`
}

// csAnswers decodes an answer line (one result or an array of them).
func csAnswers(line string) ([]csAnswer, error) {
	var many []csAnswer
	if strings.HasPrefix(line, "[") {
		err := json.Unmarshal([]byte(line), &many)
		return many, err
	}
	var one csAnswer
	err := json.Unmarshal([]byte(line), &one)
	return []csAnswer{one}, err
}

// csJudge checks an answer against what the command was meant to do and
// acknowledges the k-th command of f when it says done or refused.
func csJudge(t *testing.T, f *csFile, k int, refused bool, a csAnswer) {
	t.Helper()
	switch {
	case refused && !a.IsError:
		t.Errorf("%s: command %d should have been refused: %s", f.path, k, a.Content)
	case !refused && a.IsError:
		t.Errorf("%s: command %d failed: %s", f.path, k, a.Content)
	case refused && !strings.Contains(strings.ToLower(a.Content), "nothing was changed"):
		t.Errorf("%s: refusal %d does not say nothing was changed: %s", f.path, k, a.Content)
	default:
		f.ack(k, true)
	}
}
