package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/storeurl"
)

// These tests check tenant isolation on every store that has tenants (a
// directory, SQLite, PostgreSQL): no command of one tenant reads, lists,
// changes or detects another tenant's files, tenant ids are validated, and
// a store is single-tenant or multi-tenant, never both.

// tenantBackends are the stores with tenants, each new and empty.
func tenantBackends() []backendtest.Backend {
	dir := backendtest.Backend{Name: "dir", URL: func(t testing.TB) string { return filepath.Join(t.TempDir(), "store") }}
	return append([]backendtest.Backend{dir}, backends(false)...)
}

// corpusLine is what these tests use of a line of the hostile corpus.
type corpusLine struct {
	ID      string          `json:"id"`
	Cmd     json.RawMessage `json:"cmd"`
	Expect  string          `json:"expect"`
	Note    string          `json:"note"`
	Layer   string          `json:"layer"`
	Tenant  *string         `json:"tenant"`
	RawJSON string          `json:"raw_json"`
	PathB64 string          `json:"path_b64"`
	Race    json.RawMessage `json:"race"`
	Gen     *struct {
		Field, Prefix, Repeat string
		Count                 int
	} `json:"gen"`
	Setup []struct {
		Op      string  `json:"op"`
		Path    string  `json:"path"`
		Content *string `json:"content"`
		B64     string  `json:"b64"`
	} `json:"setup"`
}

func readCorpus(t *testing.T) []corpusLine {
	t.Helper()
	data, err := os.ReadFile("../../testdata/hostile-paths.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []corpusLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var l corpusLine
		if err := json.Unmarshal(text, &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) < 200 {
		t.Fatalf("the corpus has %d lines", len(lines))
	}
	return lines
}

// setUp makes the files and directories of the line's setup in s.
func (l corpusLine) setUp(ctx context.Context, s memtool.Store) {
	for _, op := range l.Setup {
		name := strings.TrimPrefix(op.Path, "/")
		switch op.Op {
		case "write":
			data := []byte{}
			if op.Content != nil {
				data = []byte(*op.Content)
			} else if op.B64 != "" {
				data, _ = base64.StdEncoding.DecodeString(op.B64)
			}
			s.WriteFile(ctx, name, data, memtool.Replace)
		case "mkdir":
			s.Mkdir(ctx, name)
		}
	}
}

// wire returns the tool input of a corpus line, or nil for a line that
// cannot go through the wire (raw path bytes no JSON can carry).
func (l corpusLine) wire(t *testing.T) []byte {
	switch {
	case l.RawJSON != "":
		return []byte(l.RawJSON)
	case l.PathB64 != "":
		return nil
	case l.Gen != nil:
		var obj map[string]any
		if err := json.Unmarshal(l.Cmd, &obj); err != nil {
			t.Fatal(err)
		}
		obj[l.Gen.Field] = l.Gen.Prefix + strings.Repeat(l.Gen.Repeat, l.Gen.Count)
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return l.Cmd
}

// tenantStores returns a function that opens the tenants of the store at
// url, all through one handle, as a server opens them.
func tenantStores(t *testing.T, url string) func(id string) memtool.Store {
	t.Helper()
	open, closer, err := storeurl.OpenTenants(context.Background(), url, &storeurl.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return func(id string) memtool.Store {
		s, err := open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// victims are the tenants whose files the attacking tenants must never
// reach; they hold files under the names the corpus attacks.
var victims = []string{"t1", "other-tenant", "victim"}

func victimSecret(tenant string) string { return "VICTIM-SECRET-OF-" + tenant }

func seedVictim(t *testing.T, url, tenant string) string {
	t.Helper()
	ctx := context.Background()
	s := openTestStore(t, url, tenant)
	for _, d := range []string{"sub", "dir", "secret"} {
		if err := s.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a.txt", "sub/b.txt", "notes.txt", "secret/secret.txt", "dir/file.txt", ".hidden"} {
		if err := s.WriteFile(ctx, f, []byte(victimSecret(tenant)+" in "+f+"\n"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	return snapshot(t, s)
}

// attack runs every line of the corpus that the wire can carry, each as a
// tenant of its own (attacker-N) after the line's setup, and returns the
// answers.
func attack(t *testing.T, url string, lines []corpusLine) []string {
	t.Helper()
	ctx := context.Background()
	tenant := tenantStores(t, url)
	var answers []string
	for i, l := range lines {
		input := l.wire(t)
		if l.Layer != "" || l.Race != nil || input == nil {
			continue
		}
		s := tenant(fmt.Sprintf("attacker-%d", i))
		l.setUp(ctx, s)
		res := memtool.New(s, nil).Run(ctx, input)
		b, _ := json.Marshal(res.Content())
		answers = append(answers, fmt.Sprintf("%s is_error=%v %s", l.ID, res.IsError, b))
	}
	return answers
}

// TestTenantIsolation runs the hostile corpus as some 200 attacking tenants
// beside victim tenants whose files have the names the corpus attacks, on
// every store with tenants (a directory, the databases, S3). No answer may
// hold a victim's bytes, every victim's memory must be as it was, and every
// answer must be the one the attackers get from a store without the
// victims (so not even the existence of a victim's file shows). Those
// answers are taken once, from a directory store: every backend answers as
// the directory store does (TestReferenceBatteryOnBackends), so a backend
// whose answers differ fails here too.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	checkTenantIsolation(t, append(tenantBackends(), backends(true)...), attack)
}

// checkTenantIsolation runs the corpus lines through attack on a new
// directory store alone, then, in a subtest for each of backends, on a new
// store beside the victims (see TestTenantIsolation).
func checkTenantIsolation(t *testing.T, backends []backendtest.Backend, attack func(t *testing.T, url string, lines []corpusLine) []string) {
	if testing.Short() {
		t.Skip("the corpus runs as some 200 tenants per store; skipped in -short")
	}
	lines := readCorpus(t)
	alone := attack(t, tenantBackends()[0].URL(t), lines)
	if len(alone) < 150 {
		t.Fatalf("only %d answers", len(alone))
	}
	for _, be := range backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			url := be.URL(t)
			before := map[string]string{}
			for _, v := range victims {
				before[v] = seedVictim(t, url, v)
			}
			beside := attack(t, url, lines)
			if len(beside) != len(alone) {
				t.Fatalf("%d answers beside the victims, %d alone", len(beside), len(alone))
			}
			for i := range alone {
				if strings.Contains(beside[i], "VICTIM-SECRET") {
					t.Errorf("an attacker read a victim's file: %.400s", beside[i])
				}
				if beside[i] != alone[i] {
					t.Errorf("the answer depends on the victims' files:\nbeside: %.400s\n alone: %.400s", beside[i], alone[i])
				}
			}
			for _, v := range victims {
				if got := snapshot(t, openTestStore(t, url, v)); got != before[v] {
					t.Errorf("victim %s changed:\n%s\nwas:\n%s", v, got, before[v])
				}
			}
		})
	}
}

// TestTenantCorpusLines runs the corpus's tenant layer: an id that is not
// valid is refused before anything is opened, and a valid tenant cannot
// reach another's files through the path.
func TestTenantCorpusLines(t *testing.T) {
	t.Parallel()
	var lines []corpusLine
	for _, l := range readCorpus(t) {
		if l.Layer == "tenant" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 5 {
		t.Fatalf("only %d tenant lines in the corpus", len(lines))
	}
	for _, be := range tenantBackends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := be.URL(t)
			before := map[string]string{}
			for _, v := range victims {
				before[v] = seedVictim(t, url, v)
			}
			for _, l := range lines {
				tenant := *l.Tenant
				s, closer, err := openStore(ctx, url, tenant, true)
				if err != nil {
					if memtool.ValidateTenant(tenant) == nil {
						t.Errorf("%s: tenant %q is valid but the store refused it: %v", l.ID, tenant, err)
					}
					if strings.Contains(err.Error(), "VICTIM-SECRET") {
						t.Errorf("%s: the error leaks a victim's bytes: %v", l.ID, err)
					}
					continue
				}
				if memtool.ValidateTenant(tenant) != nil {
					t.Errorf("%s: the store accepted the invalid tenant %q", l.ID, tenant)
				}
				res := memtool.New(s, nil).Run(ctx, l.wire(t))
				closer.Close()
				if l.Expect == "reject" && !res.IsError {
					t.Errorf("%s (%s): answered %q, want an error", l.ID, l.Note, res.Text)
				}
				for _, v := range victims {
					if v != tenant && strings.Contains(res.Text, victimSecret(v)+" ") {
						t.Errorf("%s (%s): tenant %s read %s's file: %q", l.ID, l.Note, tenant, v, res.Text)
					}
				}
			}
			for _, v := range victims {
				if got := snapshot(t, openTestStore(t, url, v)); got != before[v] {
					t.Errorf("victim %s changed:\n%s\nwas:\n%s", v, got, before[v])
				}
			}
		})
	}
}

// TestTenantsThroughTheBinary runs two tenants of one store in two memtool
// exec processes, and checks that each sees only its own files.
func TestTenantsThroughTheBinary(t *testing.T) {
	t.Parallel()
	for _, be := range tenantBackends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			url := be.URL(t)
			for _, tenant := range []string{"alice", "bob"} {
				out := execMemtool(t, jsonLine(createInput("/memories/notes.md", "notes of "+tenant))+
					jsonLine(createInput("/memories/"+tenant+"/only.md", "x")), "--store", url, "--tenant", tenant)
				for _, a := range decodeLines(t, out) {
					if a[0].IsError {
						t.Fatalf("%s: %s", tenant, a[0].Text())
					}
				}
			}
			for _, tenant := range []string{"alice", "bob"} {
				out := execMemtool(t, jsonLine(map[string]any{"command": "view", "path": "/memories"})+
					jsonLine(map[string]any{"command": "view", "path": "/memories/notes.md"}), "--store", url, "--tenant", tenant)
				lines := decodeLines(t, out)
				want := fmt.Sprintf("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n4K\t/memories/%s/\n1B\t/memories/%s/only.md\n%dB\t/memories/notes.md", tenant, tenant, len("notes of "+tenant))
				if got := lines[0][0].Text(); got != want {
					t.Errorf("%s's listing:\n%s\nwant:\n%s", tenant, got, want)
				}
				if got, want := lines[1][0].Text(), "Here's the content of /memories/notes.md with line numbers:\n     1\tnotes of "+tenant; got != want {
					t.Errorf("%s's notes: %q, want %q", tenant, got, want)
				}
			}
			// Every subcommand takes --tenant.
			if out, errOut, code := runMemtool(t, childEnv(), "", "view", "--store", url, "--tenant", "bob", "/memories/notes.md"); code != 0 || !strings.Contains(out, "notes of bob") {
				t.Errorf("memtool view --tenant bob: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

// TestTenancyIsExclusive checks that memtool refuses to use a
// multi-tenant store without --tenant and a single-tenant store with it,
// and refuses an invalid tenant id, each with exit status 3 and nothing
// changed.
func TestTenancyIsExclusive(t *testing.T) {
	t.Parallel()
	for _, be := range tenantBackends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			multi, single := be.URL(t), be.URL(t)
			execMemtool(t, jsonLine(createInput("/memories/a.md", "A")), "--store", multi, "--tenant", "t1")
			execMemtool(t, jsonLine(createInput("/memories/a.md", "A")), "--store", single)
			for _, args := range [][]string{
				{"--store", multi},
				{"--store", single, "--tenant", "t1"},
				{"--store", multi, "--tenant", "../t1"},
				{"--store", multi, "--tenant", "T1"},
			} {
				out, errOut, code := runMemtool(t, childEnv(), jsonLine(map[string]any{"command": "view", "path": "/memories"}), append([]string{"exec"}, args...)...)
				out += errOut
				if code != exitStore {
					t.Errorf("memtool exec %q: exit %d, want %d\n%s", args, code, exitStore, out)
				}
				if strings.Contains(out, "a.md") {
					t.Errorf("memtool exec %q revealed a file: %s", args, out)
				}
			}
			out := execMemtool(t, jsonLine(map[string]any{"command": "view", "path": "/memories/a.md"}), "--store", multi, "--tenant", "t1")
			if a := decodeLines(t, out)[0][0]; a.IsError {
				t.Errorf("tenant t1 lost its file: %s", a.Text())
			}
		})
	}
}

// A command that only reads, given a --tenant the store does not have, is
// an error (exit status 3) and claims nothing: the store does not become
// multi-tenant, and a tenant-less write still works.
func TestReadOnlyMissingTenant(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "memories")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"view", "/memories"}, {"info"}, {"history", "/memories/a.md"}} {
		_, errOut, code := runCLI(t, nil, "", append([]string{args[0], "--store", store, "--tenant", "typo"}, args[1:]...)...)
		if code != exitStore || !strings.Contains(errOut, "no tenant typo") {
			t.Errorf("%s --tenant typo: exit %d, %q; want exit %d naming the tenant", args[0], code, errOut, exitStore)
		}
	}
	mustRunCLI(t, nil, "", "create", "--store", store, "--text", "x", "/memories/a.md")
}
