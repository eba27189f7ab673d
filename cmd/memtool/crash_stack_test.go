package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	versions "github.com/memtool/memtool/history"
)

// TestCrashStackExec kills `memtool exec` with SIGKILL at random moments
// while it runs lines of single commands and of arrays (one turn each) under
// every policy stacked (encryption, history, expiry, limits, secrets, audit),
// on a directory, SQLite and PostgreSQL, and checks after each kill, on the
// reopened store, what csCheck checks: every acknowledged change is there
// with exactly its content, nothing refused was made, history kept a version
// of every content an acknowledged change replaced, every file and version
// decrypts, and the audit log names every acknowledged change. After the
// kills, gc collects nothing (every file was used within the hour) and info
// counts the files there are. TestCrashSafetyUnderPolicies runs a directory
// store without encryption; this runs the whole stack on every database.
func TestCrashStackExec(t *testing.T) {
	t.Parallel()
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	for _, be := range tenantBackends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			url, auditLog, env := csStore(t, be)
			csRounds(t, url, auditLog, env, rounds, csExecRound, nil)
		})
	}
}

// csRounds runs rounds of round on ten files under the whole stack, and
// after each, once crash (if not nil) has made the crash, checks what the
// reopened store holds (csCheck); then csAfter.
func csRounds(t *testing.T, url, auditLog string, env []string, rounds int, round func(t *testing.T, url string, env []string, files []*csFile, rng *rand.Rand, round int) (refusedPaths []string), crash func()) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var files []*csFile
	for i := range 10 {
		files = append(files, newCSFile(fmt.Sprintf("/memories/cs/d%d/f%d.md", i%3, i)))
	}
	var refused []string
	for n := range rounds {
		refused = append(refused, round(t, url, env, files, rng, n)...)
		if crash != nil {
			crash()
		}
		csCheck(t, url, "", env, files, refused, auditLog, false)
		if t.Failed() {
			t.Fatalf("round %d failed (seed %d)", n, seed)
		}
	}
	csAfter(t, url, env, files, "")
}

// csExecRound sends one memtool exec many lines, kills it after a random
// number of answers, and returns the paths of the secrets it sent, whose
// creates were all refused.
func csExecRound(t *testing.T, url string, env []string, files []*csFile, rng *rand.Rand, round int) (refusedPaths []string) {
	t.Helper()
	lines, plan, refusedPaths := csPlan(files, rng, round)
	cmd := exec.Command(plainBinary(t), "exec", "--store", url)
	cmd.Env = childEnv(env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for _, l := range lines {
			if _, err := fmt.Fprintln(stdin, l); err != nil {
				return
			}
		}
		stdin.Close()
	}()
	killAt := rng.IntN(len(lines))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	answered := 0
	for answered < len(lines) && sc.Scan() {
		csJudgeLine(t, plan[answered], answered, sc.Text())
		answered++
		if answered == killAt {
			cmd.Process.Kill()
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if answered < killAt {
		t.Fatalf("memtool exec ended after %d answers, before its kill: %s", answered, stderr.String())
	}
	return refusedPaths
}

// A csSent is one command of a line of csPlan: the k-th command of f's
// round, or (f nil) a create of a secret.
type csSent struct {
	f       *csFile
	k       int
	refused bool
}

// csPlan makes a round's 150 lines of exec input, each one command or an
// array of a few, with what each command is for csJudgeLine, and the
// paths of the secrets among them, whose creates must all be refused.
func csPlan(files []*csFile, rng *rand.Rand, round int) (lines []string, plan [][]csSent, refusedPaths []string) {
	for i := range 150 {
		var cmds []map[string]any
		var line []csSent
		for _, j := range rng.Perm(len(files))[:1+rng.IntN(3)] {
			f := files[j]
			cmd, refused := f.next(rng)
			cmds, line = append(cmds, cmd), append(line, csSent{f, len(f.states) - 1, refused})
		}
		if i%17 == 0 {
			p := fmt.Sprintf("/memories/cs/refused/r%d-%d.md", round, i)
			refusedPaths = append(refusedPaths, p)
			cmds = append(cmds, map[string]any{"command": "create", "path": p, "file_text": "token ghp_" + strings.Repeat("A1b2", 9)})
			line = append(line, csSent{refused: true})
		}
		var b []byte
		if len(cmds) == 1 {
			b, _ = json.Marshal(cmds[0])
		} else {
			b, _ = json.Marshal(cmds)
		}
		lines, plan = append(lines, string(b)), append(plan, line)
	}
	return lines, plan, refusedPaths
}

// csJudgeLine judges the answer to the n-th line, whose commands sent
// says.
func csJudgeLine(t *testing.T, sent []csSent, n int, answer string) {
	t.Helper()
	as, err := csAnswers(answer)
	if err != nil || len(as) != len(sent) {
		t.Fatalf("line %d: answer %q: %v", n, answer, err)
	}
	for i, s := range sent {
		if s.f != nil {
			csJudge(t, s.f, s.k, s.refused, as[i])
		} else if !as[i].IsError {
			t.Errorf("a secret was stored: %s", as[i].Content)
		}
	}
}

// csAfter runs gc and info on the store after the kills: gc must collect
// nothing, since every file was used within the hour, and info must count
// the files there are. With tenant set, both act on that tenant.
func csAfter(t *testing.T, url string, env []string, files []*csFile, tenant string) {
	t.Helper()
	args := func(a ...string) []string {
		if tenant != "" {
			a = append(a, "--tenant", tenant)
		}
		return a
	}
	if out, errOut, code := runOn(t, env, url, args("gc", "--unused-for", "1h")...); code != 0 {
		t.Fatalf("gc: %d %s %s", code, out, errOut)
	}
	csRevert(t, url, env, files, tenant, args)
	n, size := 0, 0
	for _, f := range files {
		if f.cur() != csAbsent {
			n, size = n+1, size+len(f.cur())
		}
	}
	csCheck(t, url, tenant, env, files, nil, csAuditLog(env), false)
	out, errOut, code := runOn(t, env, url, args("info")...)
	if code != 0 {
		t.Fatalf("info: %d %s", code, errOut)
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	if want := fmt.Sprintf("memory:     %d file%s, ", n, plural); !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf(" %d bytes", size)) {
		t.Errorf("info says\n%s\nwant %d files of %d bytes", out, n, size)
	}
}

// csAuditLog is the audit log named by the policy file of env.
func csAuditLog(env []string) string {
	for _, kv := range env {
		if name, ok := strings.CutPrefix(kv, "MEMTOOL_POLICY="); ok {
			data, _ := os.ReadFile(name)
			var p struct{ Audit string }
			json.Unmarshal(data, &p)
			return p.Audit
		}
	}
	return ""
}

// csRevert reverts the first file with a version to its newest version,
// with memtool revert, and checks that the file then holds it.
func csRevert(t *testing.T, url string, env []string, files []*csFile, tenant string, args func(...string) []string) {
	t.Helper()
	ctx := context.Background()
	st, closer := csOpen(t, url, tenant, env)
	defer closer.Close()
	for _, f := range files {
		vs, err := versions.Versions(ctx, st.belowHistory, f.path)
		if err != nil || len(vs) == 0 {
			continue
		}
		n := vs[len(vs)-1].N
		want, err := versions.Read(ctx, st.belowHistory, f.path, n)
		if err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := runOn(t, env, url, args("revert", f.path, "--to", strconv.Itoa(n))...); code != 0 {
			t.Fatalf("revert %s --to %d: %d %s %s", f.path, n, code, out, errOut)
		}
		got, err := st.top.ReadFile(ctx, f.name(), 1<<20)
		if err != nil || string(got) != string(want) {
			t.Fatalf("after revert %s --to %d it holds %s (%v), want %s", f.path, n, csShow(string(got)), err, csShow(string(want)))
		}
		f.states, f.ever[string(want)] = []string{string(want)}, true
		return
	}
	t.Log("no file has a version to revert to: revert not tried")
}
