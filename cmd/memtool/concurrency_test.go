package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

// These tests check the storage contract's concurrency promises end to end:
// concurrent edits of one file never lose an update, and of several
// concurrent creates or renames onto one name exactly one wins and no file
// is lost. Run them with -race.

// editPlan is a set of edits of one file by several writers, each edit
// leaving a marker that no other edit leaves: writer w's edit j inserts the
// line <ins w.j> after line 1 (j even) or replaces the placeholder <ph w.j>
// with <rep w.j> (j odd).
type editPlan struct {
	writers, ops int
}

const editFile = "/memories/shared.txt"

func (p editPlan) initial() string {
	var b strings.Builder
	b.WriteString("BEGIN\n")
	for w := range p.writers {
		for j := 1; j < p.ops; j += 2 {
			fmt.Fprintf(&b, "<ph %d.%d>\n", w, j)
		}
	}
	b.WriteString("END")
	return b.String()
}

func (p editPlan) input(w, j int) map[string]any {
	if j%2 == 0 {
		return map[string]any{"command": "insert", "path": editFile, "insert_line": 1, "insert_text": fmt.Sprintf("<ins %d.%d>\n", w, j)}
	}
	return map[string]any{"command": "str_replace", "path": editFile, "old_str": fmt.Sprintf("<ph %d.%d>", w, j), "new_str": fmt.Sprintf("<rep %d.%d>", w, j)}
}

// check verifies the final text against which edits were acknowledged:
// each acknowledged edit's marker is there exactly once, each other edit
// left no trace, and nothing else was added or lost. It returns the number
// of acknowledged edits.
func (p editPlan) check(t *testing.T, text string, acked [][]bool) int {
	t.Helper()
	n, lines := 0, 2
	for w := range p.writers {
		for j := range p.ops {
			var mark, gone string
			if j%2 == 0 {
				mark = fmt.Sprintf("<ins %d.%d>", w, j)
			} else {
				mark, gone = fmt.Sprintf("<rep %d.%d>", w, j), fmt.Sprintf("<ph %d.%d>", w, j)
				lines++
			}
			want := 0
			if acked[w][j] {
				want = 1
				n++
				if j%2 == 0 {
					lines++
				}
			}
			if got := strings.Count(text, mark); got != want {
				t.Errorf("edit %d.%d (acknowledged: %v): marker %s occurs %d times, want %d", w, j, acked[w][j], mark, got, want)
			}
			if gone != "" {
				if got := strings.Count(text, gone); got != 1-want {
					t.Errorf("edit %d.%d (acknowledged: %v): placeholder %s occurs %d times, want %d", w, j, acked[w][j], gone, got, 1-want)
				}
			}
		}
	}
	got := strings.Split(text, "\n")
	if len(got) != lines || got[0] != "BEGIN" || got[len(got)-1] != "END" {
		t.Errorf("the file has %d lines from %q to %q, want %d lines from BEGIN to END", len(got), got[0], got[len(got)-1], lines)
	}
	return n
}

// checkStore reads the edited file from s and checks it (see check), and
// logs how many of the edits by plan.writers writers (who: "writers",
// "processes") were acknowledged.
func (p editPlan) checkStore(t *testing.T, s memtool.Store, acked [][]bool, who string) {
	t.Helper()
	data, err := s.ReadFile(context.Background(), strings.TrimPrefix(editFile, "/memories/"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n := p.check(t, string(data), acked)
	t.Logf("%d %s, %d acknowledged edits, all present", p.writers, who, n)
}

func newAcked(writers, ops int) [][]bool {
	acked := make([][]bool, writers)
	for w := range acked {
		acked[w] = make([]bool, ops)
	}
	return acked
}

func TestConcurrentEditsInProcess(t *testing.T) {
	t.Parallel()
	stores := []struct {
		name string
		open func(t *testing.T) memtool.Store
	}{
		{"filestore", func(t *testing.T) memtool.Store {
			s, err := filestore.Open(t.TempDir(), nil)
			return storetest.Opened(t, s, err)
		}},
		{"memstore", func(*testing.T) memtool.Store { return memstore.New() }},
	}
	plan := editPlan{writers: 8, ops: 40}
	if testing.Short() {
		plan.ops = 12
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := st.open(t)
			mem := memtool.New(store, nil)
			if r := mem.Run(ctx, []byte(jsonLine(map[string]any{"command": "create", "path": editFile, "file_text": plan.initial()}))); r.IsError {
				t.Fatal(r.Text)
			}
			acked := newAcked(plan.writers, plan.ops)
			var wg sync.WaitGroup
			for w := range plan.writers {
				wg.Go(func() {
					for j := range plan.ops {
						r := mem.Run(ctx, []byte(jsonLine(plan.input(w, j))))
						if r.IsError {
							t.Errorf("edit %d.%d: %s", w, j, r.Text)
						}
						acked[w][j] = !r.IsError
					}
				})
			}
			wg.Wait()
			plan.checkStore(t, store, acked, "writers")
		})
	}
}

func TestConcurrentEditsAcrossProcesses(t *testing.T) {
	t.Parallel()
	bin := plainBinary(t)
	dir := t.TempDir()
	plan := editPlan{writers: 4, ops: 50}
	if testing.Short() {
		plan.ops = 20
	}
	execMemtool(t, jsonLine(map[string]any{"command": "create", "path": editFile, "file_text": plan.initial()}), "--store", dir)

	// Each process gets its edits as lines of one input, or of a JSON array
	// of three run concurrently within the process.
	type group struct{ first, n int }
	scripts := make([]string, plan.writers)
	groups := make([][]group, plan.writers)
	for w := range plan.writers {
		var b strings.Builder
		for j := 0; j < plan.ops; {
			n := 1
			if j%7 == 3 {
				n = min(3, plan.ops-j)
			}
			if n == 1 {
				b.WriteString(jsonLine(plan.input(w, j)))
			} else {
				var batch []map[string]any
				for k := range n {
					batch = append(batch, plan.input(w, j+k))
				}
				b.WriteString(jsonLine(batch))
			}
			groups[w] = append(groups[w], group{j, n})
			j += n
		}
		scripts[w] = b.String()
	}

	cmds := make([]*exec.Cmd, plan.writers)
	outs := make([]*strings.Builder, plan.writers)
	errs := make([]*strings.Builder, plan.writers)
	stdins := make([]io.WriteCloser, plan.writers)
	for w := range plan.writers {
		cmd := exec.Command(bin, "exec", "--store", dir)
		cmd.Env = childEnv()
		outs[w], errs[w] = new(strings.Builder), new(strings.Builder)
		cmd.Stdout, cmd.Stderr = outs[w], errs[w]
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w], stdins[w] = cmd, in
	}
	var wg sync.WaitGroup
	for w := range plan.writers {
		wg.Go(func() {
			io.WriteString(stdins[w], scripts[w])
			stdins[w].Close()
		})
	}
	wg.Wait()
	acked := newAcked(plan.writers, plan.ops)
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\nstderr:\n%s", w, err, errs[w])
		}
		checkNoRace(t, errs[w].String())
		lines := decodeLines(t, outs[w].String())
		if len(lines) != len(groups[w]) {
			t.Fatalf("process %d answered %d lines, want %d", w, len(lines), len(groups[w]))
		}
		for i, g := range groups[w] {
			if len(lines[i]) != g.n {
				t.Fatalf("process %d, line %d: %d answers, want %d", w, i, len(lines[i]), g.n)
			}
			for k, a := range lines[i] {
				if a.IsError {
					t.Errorf("process %d, edit %d.%d: %s", w, w, g.first+k, a.Text())
				}
				acked[w][g.first+k] = !a.IsError
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "shared.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := plan.check(t, string(data), acked)
	t.Logf("%d processes, %d acknowledged edits, all present", plan.writers, n)
}

// raceRounds is how many times each racing test races.
func raceRounds() int {
	if testing.Short() {
		return 3
	}
	return 10
}

const racers = 4

// child is a `memtool exec` process answering one line at a time.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *strings.Builder
}

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	return startChildEnv(t, nil, args...)
}

// startChildEnv is startChild with extra environment variables. The child
// runs the binary built without the race detector (see plainBinary).
func startChildEnv(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(plainBinary(t), append([]string{"exec"}, args...)...)
	cmd.Env = childEnv(env...)
	c := &child{cmd: cmd, stderr: new(strings.Builder)}
	cmd.Stderr = c.stderr
	stdin, out := startPiped(t, cmd)
	c.stdin, c.stdout = stdin, bufio.NewReader(out)
	return c
}

// ask sends one input line and returns the answer line. Safe to call from
// a goroutine (it reports failure as an error).
func (c *child) ask(line string) (string, error) {
	if _, err := io.WriteString(c.stdin, line); err != nil {
		return "", err
	}
	ans, err := c.stdout.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the answer to %q: %v (stderr: %s)", line, err, c.stderr)
	}
	return ans, nil
}

// answer sends one input line and decodes the answer.
func (c *child) answer(line string) (answer, error) {
	var a answer
	out, err := c.ask(line)
	if err == nil {
		err = json.Unmarshal([]byte(out), &a)
	}
	return a, err
}

func (c *child) stop(t *testing.T) {
	t.Helper()
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("memtool exec: %v\nstderr:\n%s", err, c.stderr)
	}
	checkNoRace(t, c.stderr.String())
}

// raceProcesses starts one memtool exec per input line on the store in dir,
// waits until each has opened the store, then sends all lines at once and
// returns the answers, in the order of lines.
func raceProcesses(t *testing.T, dir string, lines []string) []answer {
	t.Helper()
	children := startChildren(t, dir, len(lines))
	answers := make([]answer, len(lines))
	errs := make([]error, len(lines))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Go(func() {
			<-start
			var out string
			out, errs[i] = c.ask(lines[i])
			if errs[i] == nil {
				errs[i] = json.Unmarshal([]byte(out), &answers[i])
			}
		})
	}
	close(start)
	wg.Wait()
	for _, c := range children {
		c.stop(t)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return answers
}

// oneWinner checks that exactly one answer is want and every other one is
// lose, and returns the winner's index.
func oneWinner(t *testing.T, answers []answer, want, lose string) int {
	t.Helper()
	winner := -1
	for i, a := range answers {
		switch {
		case !a.IsError && a.Text() == want:
			if winner >= 0 {
				t.Errorf("racers %d and %d both won: %q", winner, i, want)
			}
			winner = i
		case a.IsError && a.Text() == lose:
		default:
			t.Errorf("racer %d: got %s, want %q or %q", i, a.Content, want, lose)
		}
	}
	if winner < 0 {
		t.Fatalf("no racer won; answers: %v", answers)
	}
	return winner
}

// dirNames lists the directory at dir on disk, sorted, so a test sees
// everything there (also what the store hides).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sortedNames(entries, os.DirEntry.Name)
}

func readDisk(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func createInput(p, text string) map[string]any {
	return map[string]any{"command": "create", "path": p, "file_text": text}
}

func renameInput(from, to string) map[string]any {
	return map[string]any{"command": "rename", "old_path": from, "new_path": to}
}

func TestRacingCreatesAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for round := range raceRounds() {
		p := fmt.Sprintf("/memories/c%d/target.txt", round)
		lines := make([]string, racers)
		for i := range lines {
			lines[i] = jsonLine(createInput(p, fmt.Sprintf("written by racer %d", i)))
		}
		answers := raceProcesses(t, dir, lines)
		w := oneWinner(t, answers, "File created successfully at: "+p, "Error: File "+p+" already exists")
		if got, want := readDisk(t, filepath.Join(dir, fmt.Sprintf("c%d/target.txt", round))), fmt.Sprintf("written by racer %d", w); got != want {
			t.Errorf("round %d: content %q, want the winner's %q", round, got, want)
		}
		if got := dirNames(t, filepath.Join(dir, fmt.Sprintf("c%d", round))); !slices.Equal(got, []string{"target.txt"}) {
			t.Errorf("round %d: directory holds %q, want just target.txt", round, got)
		}
	}
}

// renameRace names the files of one rename race: racers sources in
// /memories/rR, one destination in a directory that does not exist yet.
type renameRace struct{ round int }

func (r renameRace) src(i int) string { return fmt.Sprintf("/memories/r%d/src%d.txt", r.round, i) }
func (r renameRace) dst() string      { return fmt.Sprintf("/memories/r%d/to/dst.txt", r.round) }
func (r renameRace) text(i int) string {
	return fmt.Sprintf("source %d of round %d", i, r.round)
}

func (r renameRace) setup() string {
	var b strings.Builder
	for i := range racers {
		b.WriteString(jsonLine(createInput(r.src(i), r.text(i))))
	}
	return b.String()
}

func (r renameRace) lines() []string {
	lines := make([]string, racers)
	for i := range lines {
		lines[i] = jsonLine(renameInput(r.src(i), r.dst()))
	}
	return lines
}

// checkDisk checks the store on disk after the race that w won: the
// destination holds w's text, w's source is gone, and every loser's source
// is still there with its own text; nothing else is in either directory.
func (r renameRace) checkDisk(t *testing.T, dir string, w int) {
	t.Helper()
	base := filepath.Join(dir, fmt.Sprintf("r%d", r.round))
	if got := readDisk(t, filepath.Join(base, "to", "dst.txt")); got != r.text(w) {
		t.Errorf("round %d: destination holds %q, want the winner's %q", r.round, got, r.text(w))
	}
	want := []string{"to"}
	for i := range racers {
		if i != w {
			want = append(want, fmt.Sprintf("src%d.txt", i))
			if got := readDisk(t, filepath.Join(base, fmt.Sprintf("src%d.txt", i))); got != r.text(i) {
				t.Errorf("round %d: loser %d's source holds %q, want %q", r.round, i, got, r.text(i))
			}
		}
	}
	slices.Sort(want)
	if got := dirNames(t, base); !slices.Equal(got, want) {
		t.Errorf("round %d: %s holds %q, want %q", r.round, base, got, want)
	}
	if got := dirNames(t, filepath.Join(base, "to")); !slices.Equal(got, []string{"dst.txt"}) {
		t.Errorf("round %d: to/ holds %q, want just dst.txt", r.round, got)
	}
}

// winnerOf checks one rename race's answers: exactly one success.
func (r renameRace) winnerOf(t *testing.T, answers []answer) int {
	t.Helper()
	winner := -1
	lose := "Error: The destination " + r.dst() + " already exists"
	for i, a := range answers {
		switch {
		case !a.IsError && a.Text() == "Successfully renamed "+r.src(i)+" to "+r.dst():
			if winner >= 0 {
				t.Errorf("round %d: renames %d and %d both won", r.round, winner, i)
			}
			winner = i
		case a.IsError && a.Text() == lose:
		default:
			t.Errorf("round %d: rename %d answered %s", r.round, i, a.Content)
		}
	}
	if winner < 0 {
		t.Fatalf("round %d: no rename won", r.round)
	}
	return winner
}

func TestRacingRenamesAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for round := range raceRounds() {
		r := renameRace{round}
		for _, a := range decodeLines(t, execMemtool(t, r.setup(), "--store", dir)) {
			if a[0].IsError {
				t.Fatal(a[0].Text())
			}
		}
		w := r.winnerOf(t, raceProcesses(t, dir, r.lines()))
		r.checkDisk(t, dir, w)
	}
}

// TestRacingInOneLine races the same creates and renames as the tests
// above, but as one exec line holding a JSON array, which memtool runs
// concurrently, on the file store and on mem:. The answers come back in
// input order, so the success must sit at the index of the input whose
// content won.
func TestRacingInOneLine(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"file", "mem"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			store := "mem:"
			if kind == "file" {
				store = dir
			}
			var in strings.Builder
			rounds := raceRounds()
			for round := range rounds {
				var creates []map[string]any
				for i := range racers {
					creates = append(creates, createInput(fmt.Sprintf("/memories/c%d/target.txt", round), fmt.Sprintf("written by racer %d", i)))
				}
				in.WriteString(jsonLine(creates))
				in.WriteString(jsonLine(map[string]any{"command": "view", "path": fmt.Sprintf("/memories/c%d/target.txt", round)}))
				r := renameRace{round}
				in.WriteString(r.setup())
				var renames []map[string]any
				for i := range racers {
					renames = append(renames, renameInput(r.src(i), r.dst()))
				}
				in.WriteString(jsonLine(renames))
				in.WriteString(jsonLine(map[string]any{"command": "view", "path": fmt.Sprintf("/memories/r%d", round)}))
				in.WriteString(jsonLine(map[string]any{"command": "view", "path": r.dst()}))
			}
			lines := decodeLines(t, execMemtool(t, in.String(), "--store", store))
			perRound := 2 + racers + 3
			if len(lines) != rounds*perRound {
				t.Fatalf("%d answer lines, want %d", len(lines), rounds*perRound)
			}
			for round := range rounds {
				got := lines[round*perRound : (round+1)*perRound]
				p := fmt.Sprintf("/memories/c%d/target.txt", round)
				if len(got[0]) != racers {
					t.Fatalf("round %d: %d answers to %d creates", round, len(got[0]), racers)
				}
				w := oneWinner(t, got[0], "File created successfully at: "+p, "Error: File "+p+" already exists")
				if want := fmt.Sprintf("Here's the content of %s with line numbers:\n     1\twritten by racer %d", p, w); got[1][0].Text() != want {
					t.Errorf("round %d: view after the creates: %q, want %q", round, got[1][0].Text(), want)
				}

				r := renameRace{round}
				rn := got[2+racers]
				if len(rn) != racers {
					t.Fatalf("round %d: %d answers to %d renames", round, len(rn), racers)
				}
				w = r.winnerOf(t, rn)
				var listing []string
				for i := range racers {
					if i != w {
						listing = append(listing, fmt.Sprintf("%dB\t%s", len(r.text(i)), r.src(i)))
					}
				}
				listing = append(listing, "4K\t"+path.Dir(r.dst())+"/", fmt.Sprintf("%dB\t%s", len(r.text(w)), r.dst()))
				wantList := fmt.Sprintf("Here're the files and directories up to 2 levels deep in /memories/r%d, excluding hidden items and node_modules:\n4K\t/memories/r%d\n%s", round, round, strings.Join(listing, "\n"))
				if got := got[3+racers][0].Text(); got != wantList {
					t.Errorf("round %d: listing after the renames:\n%s\nwant:\n%s", round, got, wantList)
				}
				if want := fmt.Sprintf("Here's the content of %s with line numbers:\n     1\t%s", r.dst(), r.text(w)); got[4+racers][0].Text() != want {
					t.Errorf("round %d: destination %q, want %q", round, got[4+racers][0].Text(), want)
				}
				if kind == "file" {
					r.checkDisk(t, dir, w)
				}
			}
		})
	}
}

// racePolicies are the policies the many-process race tests run under:
// none (to check the test itself), each alone, and all together. %q is
// the audit log's file.
var racePolicies = []struct{ name, policy string }{
	{"none", `{}`},
	{"encrypt", `{"encrypt":true}`},
	{"history", `{"history":{}}`},
	{"expiry", `{"expiry":true}`},
	{"limits", `{"limits":{"max_file_size":65536,"max_files":1000,"max_bytes":10000000}}`},
	{"secrets", `{"secrets":"reject"}`},
	{"audit", `{"audit":%q}`},
	{"all", `{"encrypt":true,"history":{},"expiry":true,"limits":{"max_file_size":65536,"max_files":1000},"secrets":"redact","audit":%q}`},
}

// TestRacesUnderPolicies runs the many-process races of the tests above
// (edits of one file, creates onto one name, renames onto one name) and
// renames racing edits and a create, with 4 memtool exec processes under
// each policy of racePolicies, on the directory store, PostgreSQL and S3
// (where the policies' own files, history's versions and expiry's index,
// live in the shared backend too), and under all policies on SQLite: no
// acknowledged change is lost, and exactly one
// racer wins each name. Each race runs once per stack, to keep the time
// down; the tests above race more rounds without policies.
func TestRacesUnderPolicies(t *testing.T) {
	t.Parallel()
	key, _ := encrypt.NewKey("k1")
	type stack struct{ backend, name, policy string }
	var stacks []stack
	for _, p := range racePolicies {
		stacks = append(stacks, stack{"dir", p.name, p.policy})
	}
	stacks = append(stacks, stack{"sqlite", "all", racePolicies[len(racePolicies)-1].policy})
	for _, backend := range []string{"postgres", "s3"} {
		for _, p := range racePolicies {
			stacks = append(stacks, stack{backend, p.name, p.policy})
		}
	}
	for _, s := range stacks {
		t.Run(s.backend+"/"+s.name, func(t *testing.T) {
			t.Parallel()
			url, env := raceStore(t, s.backend, s.policy, key)
			racePolicy(t, url, env)
		})
	}
}

// raceStore makes a new store of backend ("dir", "sqlite", "postgres" or
// "s3") for a race under policy (a %q in it is the audit log's path), and
// returns its URL and the environment that names the policy and key.
func raceStore(t *testing.T, backend, policy string, key encrypt.Key) (string, []string) {
	tmp := t.TempDir()
	var url string
	switch backend {
	case "dir":
		url = filepath.Join(tmp, "store")
	case "sqlite":
		url = "sqlite://" + filepath.Join(tmp, "m.db")
	case "postgres":
		url = pgtest.URL(t)
	case "s3":
		url = s3URL(t, "")
	}
	if strings.Contains(policy, "%q") {
		policy = fmt.Sprintf(policy, filepath.Join(tmp, "audit.jsonl"))
	}
	return url, policyEnv(t, policy, key)
}

// raceOnSharedBackends runs race under each of policies (by name) on a
// new store of a directory, PostgreSQL and S3, each in a parallel subtest.
func raceOnSharedBackends(t *testing.T, policies map[string]string, race func(t *testing.T, url string, env []string)) {
	key, _ := encrypt.NewKey("k1")
	for _, backend := range []string{"dir", "postgres", "s3"} {
		for name, policy := range policies {
			t.Run(backend+"/"+name, func(t *testing.T) {
				t.Parallel()
				url, env := raceStore(t, backend, policy, key)
				race(t, url, env)
			})
		}
	}
}

// newRacePool starts n memtool exec processes on the store at url in the
// environment env (p.stop stops them), with store the same
// store in this process, to read the results through.
func newRacePool(t *testing.T, store memtool.Store, url string, env []string, n int) *racePool {
	p := &racePool{t: t, store: store}
	for range n {
		p.kids = append(p.kids, startChildEnv(t, env, "--store", url))
	}
	return p
}

// stop stops the pool's processes.
func (p *racePool) stop() {
	for _, c := range p.kids {
		c.stop(p.t)
	}
}

// racePolicy runs the races on the store at url, with 4 memtool exec
// processes in the environment env (which names a policy and a key), and
// reads the results through the same policy in this process.
func racePolicy(t *testing.T, url string, env []string) {
	p := newRacePool(t, openVia(t, url, env).top, url, env, racers)
	defer p.stop()
	lines := make([][]string, racers)
	for i := range lines {
		lines[i] = []string{jsonLine(map[string]any{"command": "view", "path": "/memories"})}
	}
	p.ask(lines) // every child has opened the store

	// Edits of one file.
	plan := editPlan{writers: racers, ops: 8}
	p.one(jsonLine(createInput(editFile, plan.initial())))
	for w := range lines {
		lines[w] = nil
		for j := range plan.ops {
			lines[w] = append(lines[w], jsonLine(plan.input(w, j)))
		}
	}
	acked := newAcked(plan.writers, plan.ops)
	for w, as := range p.ask(lines) {
		for j, a := range as {
			if a.IsError {
				t.Errorf("edit %d.%d: %s", w, j, a.Text())
			}
			acked[w][j] = !a.IsError
		}
	}
	text, _ := p.read(editFile)
	plan.check(t, text, acked)

	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		p.creates(round)
		p.renames(round)
		p.renameRacingEdits(round)
	}
}

// racePool is memtool exec processes on one store, and the store as they
// see it, opened in the test's process.
type racePool struct {
	t     *testing.T
	kids  []*child
	store memtool.Store
}

// ask sends child i the lines[i] (missing or nil: none), all children at
// once, each child's lines one after the other, and returns the answers
// by child.
func (p *racePool) ask(lines [][]string) [][]answer {
	p.t.Helper()
	answers := make([][]answer, len(lines))
	errs := make([]error, len(lines))
	var wg sync.WaitGroup
	for i, c := range p.kids[:len(lines)] {
		wg.Go(func() {
			for _, line := range lines[i] {
				a, err := c.answer(line)
				if err != nil {
					errs[i] = err
					return
				}
				answers[i] = append(answers[i], a)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		p.t.Fatal(err)
	}
	return answers
}

// each sends every child one line, made from its index, at once, and
// returns the answers in the children's order.
func (p *racePool) each(line func(i int) string) []answer {
	p.t.Helper()
	lines := make([][]string, len(p.kids))
	for i := range lines {
		lines[i] = []string{line(i)}
	}
	var out []answer
	for _, as := range p.ask(lines) {
		out = append(out, as[0])
	}
	return out
}

// one sends the line to one child, and fails the test if it fails.
func (p *racePool) one(line string) {
	p.t.Helper()
	if a := p.ask([][]string{{line}})[0][0]; a.IsError {
		p.t.Fatalf("%s: %s", line, a.Text())
	}
}

// read returns the text of the file at the virtual path name, and whether
// it exists.
func (p *racePool) read(name string) (string, bool) {
	p.t.Helper()
	data, err := p.store.ReadFile(context.Background(), strings.TrimPrefix(name, "/memories/"), 1<<20)
	if errors.Is(err, memtool.ErrNotExist) {
		return "", false
	}
	if err != nil {
		p.t.Fatalf("reading %s: %v", name, err)
	}
	return string(data), true
}

// creates races every child creating one file.
func (p *racePool) creates(round int) {
	t := p.t
	target := fmt.Sprintf("/memories/c%d/target.txt", round)
	answers := p.each(func(i int) string { return jsonLine(createInput(target, fmt.Sprintf("written by racer %d", i))) })
	w := oneWinner(t, answers, "File created successfully at: "+target, "Error: File "+target+" already exists")
	if got, _ := p.read(target); got != fmt.Sprintf("written by racer %d", w) {
		t.Errorf("round %d: creates: the file holds %q, want racer %d's text", round, got, w)
	}
}

// renames races every child renaming its own file onto one name.
func (p *racePool) renames(round int) {
	t := p.t
	r := renameRace{round}
	for i := range racers {
		p.one(jsonLine(createInput(r.src(i), r.text(i))))
	}
	w := r.winnerOf(t, p.each(func(i int) string { return r.lines()[i] }))
	if got, _ := p.read(r.dst()); got != r.text(w) {
		t.Errorf("round %d: renames: the destination holds %q, want the winner's %q", round, got, r.text(w))
	}
	for i := range racers {
		got, ok := p.read(r.src(i))
		if i == w && ok || i != w && got != r.text(i) {
			t.Errorf("round %d: renames: source %d (winner %d) holds %q, exists %v", round, i, w, got, ok)
		}
	}
}

// renameRacingEdits races a rename and a create onto one name against two
// writers' edits of the renamed file: the rename or the create wins; every
// acknowledged edit is in the file the edited text ended in; an edit that
// came after the rename finds no file.
func (p *racePool) renameRacingEdits(round int) {
	t := p.t
	from, to := fmt.Sprintf("/memories/m%d/f.txt", round), fmt.Sprintf("/memories/m%d/g.txt", round)
	plan := editPlan{writers: 2, ops: 6}
	p.one(jsonLine(createInput(from, plan.initial())))
	lines := make([][]string, racers)
	for w := range plan.writers {
		for j := range plan.ops {
			in := plan.input(w, j)
			in["path"] = from
			lines[w] = append(lines[w], jsonLine(in))
		}
	}
	lines[2] = []string{jsonLine(renameInput(from, to))}
	lines[3] = []string{jsonLine(createInput(to, "created"))}
	answers := p.ask(lines)
	renamed, created := !answers[2][0].IsError, !answers[3][0].IsError
	if renamed == created {
		t.Fatalf("round %d: rename won %v, create won %v: want exactly one (rename: %s; create: %s)", round, renamed, created, answers[2][0].Text(), answers[3][0].Text())
	}
	acked := newAcked(plan.writers, plan.ops)
	for w := range plan.writers {
		for j, a := range answers[w] {
			acked[w][j] = !a.IsError
			if a.IsError && a.Text() != "Error: The path "+from+" does not exist. Please provide a valid path." {
				t.Errorf("round %d: edit %d.%d: %s", round, w, j, a.Text())
			}
		}
	}
	lineage := from
	if renamed {
		lineage = to
		if _, ok := p.read(from); ok {
			t.Errorf("round %d: the renamed file is still at its old name", round)
		}
	} else if got, _ := p.read(to); got != "created" {
		t.Errorf("round %d: the create won, and its file holds %q", round, got)
	}
	text, _ := p.read(lineage)
	plan.check(t, text, acked)
}

// openVia opens the store at url as memtool does in the environment env
// (its policy and keys), in this process, until t ends.
func openVia(t *testing.T, url string, env []string) *policyStack {
	t.Helper()
	return openViaTenant(t, url, "", env)
}

// openViaTenant is openVia on the tenant's store ("" for none).
func openViaTenant(t *testing.T, url, tenant string, env []string) *policyStack {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cli := &cliEnv{stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	_, st, closer, err := openStack(context.Background(), cli, &storeFlags{store: url, tenant: tenant}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return st
}
