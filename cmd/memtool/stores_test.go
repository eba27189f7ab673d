package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
	"github.com/memtool/memtool/storeurl"
)

// These tests run the database stores through the real memtool binary:
// the reference battery must get the same answer, line by line, from
// `memtool exec --store sqlite:///…` and `--store postgres://…` as from
// `--store DIR`, and several processes sharing one database must lose no
// update and let exactly one racer win.

// testBackends are the backends of backendtest.All (the one list of every
// backend available here) that a memtool process can open by URL, but the
// directory store, which the tests above drive on their own. PostgreSQL
// needs $MEMTOOL_TEST_POSTGRES (see pgtest). S3's credentials are in the
// environment for the whole process (see TestMain).
var testBackends = func() []backendtest.Backend {
	var out []backendtest.Backend
	for _, be := range backendtest.All() {
		if be.Shared && be.Name != "filestore" {
			out = append(out, be)
		}
	}
	return out
}()

// backends returns the object stores, or the others (the databases).
func backends(object bool) []backendtest.Backend {
	var out []backendtest.Backend
	for _, be := range testBackends {
		if be.Object == object {
			out = append(out, be)
		}
	}
	return out
}

// openTestStore opens the store at url in the test process, through the
// CLI's own registry, as a second handle beside the children's.
func openTestStore(t *testing.T, url, tenant string) memtool.Store {
	t.Helper()
	s, closer, err := openStore(context.Background(), url, tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return s
}

// runThrough opens the directory store at dir in the test process, runs
// the tool inputs through a Memory over wrap(the store), failing t on an
// error answer, and closes the store again for a memtool child to open.
func runThrough(t *testing.T, dir string, wrap func(memtool.Store) memtool.Store, inputs ...string) {
	t.Helper()
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	mem := memtool.New(wrap(fs), nil)
	for _, in := range inputs {
		if r := mem.Run(context.Background(), []byte(in)); r.IsError {
			t.Fatal(r.Text)
		}
	}
}

// battery is one run of the reference battery: an answer line per command
// line, and a snapshot of the store at each "tree" setup line.
type battery struct {
	labels  []string
	answers []string
}

func readCases(t *testing.T) []map[string]json.RawMessage {
	t.Helper()
	f, err := os.Open("../../testdata/reference/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []map[string]json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var c map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// runBattery runs the battery on the store at url: commands through one
// `memtool exec` child, setup steps that every store can hold (files and
// directories under memories/) through a handle of the test's own. Setups
// that need a file system (symbolic links, FIFOs, sparse files) and those
// outside the store are left out, for every store alike.
func runBattery(t *testing.T, url string) battery {
	t.Helper()
	ctx := context.Background()
	cases := readCases(t)
	store := openTestStore(t, url, "")
	c := startChild(t, "--store", url)
	defer c.stop(t)
	var b battery
	for i, cs := range cases {
		var label string
		json.Unmarshal(cs["_c"], &label)
		label = fmt.Sprintf("line %d (%s)", i, label)
		if raw, ok := cs["setup"]; ok {
			var op string
			json.Unmarshal(raw, &op)
			if op == "tree" {
				b.labels = append(b.labels, label+" tree")
				b.answers = append(b.answers, snapshot(t, store))
				continue
			}
			applySetup(t, ctx, store, op, cs)
			continue
		}
		input := map[string]json.RawMessage{}
		for k, v := range cs {
			if !strings.HasPrefix(k, "_") {
				input[k] = v
			}
		}
		ans, err := c.ask(jsonLine(input))
		if err != nil {
			t.Fatal(err)
		}
		b.labels = append(b.labels, label)
		b.answers = append(b.answers, ans)
	}
	return b
}

func applySetup(t *testing.T, ctx context.Context, s memtool.Store, op string, c map[string]json.RawMessage) {
	t.Helper()
	str := func(k string) string {
		var v string
		json.Unmarshal(c[k], &v)
		return v
	}
	name, ok := strings.CutPrefix(str("path"), "memories/")
	if !ok {
		return // outside the store
	}
	mkdirAll := func(dir string) {
		for i := range dir {
			if dir[i] == '/' {
				s.Mkdir(ctx, dir[:i])
			}
		}
		if dir != "" {
			s.Mkdir(ctx, dir)
		}
	}
	var err error
	switch op {
	case "write", "repeat":
		var data []byte
		switch {
		case op == "repeat":
			var n int
			json.Unmarshal(c["count"], &n)
			data = []byte(strings.Repeat(str("unit"), n))
		case c["b64"] != nil:
			data, err = base64.StdEncoding.DecodeString(str("b64"))
			if err != nil {
				t.Fatal(err)
			}
		default:
			data = []byte(str("text"))
		}
		if dir := path.Dir(name); dir != "." {
			mkdirAll(dir)
		}
		err = s.WriteFile(ctx, name, data, memtool.Replace)
	case "mkdir":
		mkdirAll(name)
	case "rm":
		err = s.(memtool.RemoveAller).RemoveAll(ctx, name)
		if errors.Is(err, memtool.ErrNotExist) {
			err = nil
		}
	case "symlink", "mkfifo", "truncate":
		// Only a file system holds these.
	default:
		t.Fatalf("unknown setup %q", op)
	}
	if err != nil {
		t.Fatalf("setup %s %s: %v", op, name, err)
	}
}

// snapshot describes the whole tree of s (storetest.Snapshot), sorted.
func snapshot(t *testing.T, s memtool.Store) string {
	t.Helper()
	var lines []string
	for name, what := range storetest.Snapshot(t, s) {
		lines = append(lines, fmt.Sprintf("%s %q", name, what))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestReferenceBatteryOnBackends runs the reference battery on every
// backend: each answers as the directory store does.
func TestReferenceBatteryOnBackends(t *testing.T) {
	t.Parallel()
	want := runBattery(t, filepath.Join(t.TempDir(), "memories"))
	if len(want.answers) < 150 {
		t.Fatalf("the battery gave only %d answers", len(want.answers))
	}
	for _, be := range testBackends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			got := runBattery(t, be.URL(t))
			if len(got.answers) != len(want.answers) {
				t.Fatalf("%d answers, want %d", len(got.answers), len(want.answers))
			}
			for i := range want.answers {
				if got.answers[i] != want.answers[i] {
					t.Errorf("%s:\n got: %.600s\nwant: %.600s", want.labels[i], got.answers[i], want.answers[i])
				}
			}
		})
	}
}

// TestConcurrentEditsOnDatabases runs the edit plan of
// TestConcurrentEditsAcrossProcesses with 4 memtool exec processes on one
// database: every acknowledged edit is in the file, once.
func TestConcurrentEditsOnDatabases(t *testing.T) {
	t.Parallel()
	plan := editPlan{writers: 4, ops: 40}
	if testing.Short() {
		plan.ops = 16
	}
	for _, be := range backends(false) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			url := be.URL(t)
			concurrentEdits(t, plan, url, "")
		})
	}
}

// TestRacingOnDatabases races 4 processes creating one file, and 4
// renaming their own files onto one name, on one database: exactly one
// wins each race, and the store holds what the winner wrote.
func TestRacingOnDatabases(t *testing.T) {
	t.Parallel()
	for _, be := range backends(false) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			checkRaces(t, be.URL(t), true)
		})
	}
}

// checkRaces races racers processes creating one file, then renaming their
// own files onto one name, on the store at url, for raceRounds rounds:
// exactly one wins each race, and the store holds what the winner wrote
// and, with listing, no other entry than the losers' sources.
func checkRaces(t *testing.T, url string, listing bool) {
	store := openTestStore(t, url, "")
	for round := range raceRounds() {
		p := fmt.Sprintf("/memories/c%d/target.txt", round)
		lines := make([]string, racers)
		for i := range lines {
			lines[i] = jsonLine(createInput(p, fmt.Sprintf("written by racer %d", i)))
		}
		w := oneWinner(t, raceProcesses(t, url, lines), "File created successfully at: "+p, "Error: File "+p+" already exists")
		if got, want := storetest.ReadText(t, store, fmt.Sprintf("c%d/target.txt", round)), fmt.Sprintf("written by racer %d", w); got != want {
			t.Errorf("round %d: content %q, want the winner's %q", round, got, want)
		}

		r := renameRace{round}
		for _, a := range decodeLines(t, execMemtool(t, r.setup(), "--store", url)) {
			if a[0].IsError {
				t.Fatal(a[0].Text())
			}
		}
		w = r.winnerOf(t, raceProcesses(t, url, r.lines()))
		base := fmt.Sprintf("r%d", round)
		if got := storetest.ReadText(t, store, base+"/to/dst.txt"); got != r.text(w) {
			t.Errorf("round %d: destination holds %q, want the winner's %q", round, got, r.text(w))
		}
		want := []string{"to"}
		for i := range racers {
			if i != w {
				want = append(want, fmt.Sprintf("src%d.txt", i))
				if got := storetest.ReadText(t, store, fmt.Sprintf("%s/src%d.txt", base, i)); got != r.text(i) {
					t.Errorf("round %d: loser %d's source holds %q", round, i, got)
				}
			}
		}
		if !listing {
			continue
		}
		slices.Sort(want)
		if got := storeNames(t, store, base); !slices.Equal(got, want) {
			t.Errorf("round %d: %s holds %q, want %q", round, base, got, want)
		}
	}
}

// storeNames lists a directory of s, sorted.
func storeNames(t *testing.T, s memtool.Store, dir string) []string {
	t.Helper()
	entries, err := s.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return sortedNames(entries, func(e memtool.FileInfo) string { return e.Name })
}

// sortedNames returns the name of each of items, as name gives it, sorted
// (nil for no items).
func sortedNames[E any](items []E, name func(E) string) []string {
	var names []string
	for _, item := range items {
		names = append(names, name(item))
	}
	slices.Sort(names)
	return names
}

// concurrentEdits runs plan.writers memtool exec processes on the store at
// url (in tenant, if not ""), each making plan.ops edits of one shared file,
// and checks that every acknowledged edit is in the file at the end.
func concurrentEdits(t *testing.T, plan editPlan, url, tenant string) {
	t.Helper()
	args := []string{"--store", url}
	if tenant != "" {
		args = append(args, "--tenant", tenant)
	}
	execMemtool(t, jsonLine(createInput(editFile, plan.initial())), args...)
	children := make([]*child, plan.writers)
	for w := range children {
		children[w] = startChild(t, args...)
	}
	acked := newAcked(plan.writers, plan.ops)
	errs := make([]error, plan.writers)
	var wg sync.WaitGroup
	for w, c := range children {
		wg.Go(func() {
			for j := range plan.ops {
				a, err := c.answer(jsonLine(plan.input(w, j)))
				if err != nil {
					errs[w] = err
					return
				}
				if a.IsError {
					errs[w] = errors.Join(errs[w], fmt.Errorf("edit %d.%d: %s", w, j, a.Text()))
				}
				acked[w][j] = !a.IsError
			}
		})
	}
	wg.Wait()
	for _, c := range children {
		c.stop(t)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	plan.checkStore(t, openTestStore(t, url, tenant), acked, "processes")
}

// TestNoSecretsInMessages feeds store URLs that carry a password (in the
// userinfo, and as sslpassword) to the commands that print store URLs or
// the errors of opening them, and checks that neither password, written
// as in the URL or decoded, is in anything memtool prints: migrate's
// summary and errors, chat's banner, init's hint, the errors of exec,
// view and gc, the refusal of a policy mismatch. The live database runs with trust
// authentication, so the password in its URL is ignored.
func TestNoSecretsInMessages(t *testing.T) {
	t.Parallel()
	const password, sslPassword = "s3cr3t-Pa55/w0rd", "ssl-Pa55-s3cr3t"
	withSecrets := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(cmp.Or(u.User.Username(), "postgres"), password)
		q := u.Query()
		q.Set("sslpassword", sslPassword)
		u.RawQuery = q.Encode()
		return u.String()
	}
	live := withSecrets(pgtest.URL(t))
	dead := withSecrets("postgres://memtool@127.0.0.1:1/nodb?connect_timeout=5")
	badSQLite := "sqlite://memtool:" + url.PathEscape(password) + "@host/m.db?sslpassword=" + sslPassword
	if !strings.Contains(live, "%2F") {
		t.Fatalf("the URL %s does not encode the password's slash; the test would not see both spellings", live)
	}
	tmp := t.TempDir()
	key, _ := encrypt.NewKey("k1")
	encrypted := policyEnv(t, `{"encrypt":true}`, key)
	if _, stderr, code := runMemtoolEnv(t, encrypted, "create", "--store", live, "--text", "x", "/memories/a.md"); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		env    []string
		args   []string
		code   int
		masked bool // the output quotes the URL, with the secrets masked
	}{
		{nil, []string{"exec", "--store", dead}, exitStore, false},
		{nil, []string{"view", "--store", badSQLite, "/memories"}, exitStore, true},
		{nil, []string{"gc", "--store", dead, "--unused-for", "30d"}, exitStore, false},
		{nil, []string{"view", "--store", live, "/memories/a.md"}, exitStore, true},
		{encrypted, []string{"migrate", "--from", live, "--to", filepath.Join(tmp, "copy")}, exitOK, true},
		{nil, []string{"migrate", "--from", filepath.Join(tmp, "copy"), "--to", dead}, exitStore, false},
		{nil, []string{"migrate", "--from", badSQLite, "--to", filepath.Join(tmp, "x")}, exitStore, true},
		{nil, []string{"migrate", "--from", live, "--to", live}, exitUsage, false},
		{[]string{"ANTHROPIC_API_KEY=sk-test-unused"}, []string{"chat", "--store", filepath.Join(tmp, "copy")}, exitStore, false},
		{append([]string{"ANTHROPIC_API_KEY=sk-test-unused"}, encrypted...), []string{"chat", "--store", live}, exitOK, true},
		{encrypted, []string{"init", "--template", "dev", "--store", live}, exitOK, true},
	} {
		stdout, stderr, code := runMemtoolEnv(t, c.env, c.args...)
		out := stdout + stderr
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", c.args[0], code, c.code, out)
		}
		for _, secret := range []string{password, url.PathEscape(password), url.QueryEscape(password), sslPassword} {
			if strings.Contains(out, secret) {
				t.Errorf("memtool %q printed the secret %q:\n%s", c.args, secret, out)
			}
		}
		if c.masked && !strings.Contains(out, storeurl.Masked) {
			t.Errorf("memtool %q: the output quotes no masked URL:\n%s", c.args, out)
		}
	}
}
