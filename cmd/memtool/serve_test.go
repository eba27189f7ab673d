package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	reference "github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// These tests run `memtool serve` and `memtool keys` as a user would: the
// real binary, real stores, real HTTP over loopback.

// A serveProcess is a running memtool serve.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

// startServe starts bin serve on the store at url, listening on a free
// loopback port, and returns once it serves. It is killed when t ends.
func startServe(t *testing.T, bin, url string, args ...string) *serveProcess {
	t.Helper()
	return startServeEnv(t, bin, url, nil, args...)
}

// startServeEnv is startServe with extra environment variables env (a
// policy and its key).
func startServeEnv(t *testing.T, bin, url string, env []string, args ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--store", url, "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = childEnv(env...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, done: make(chan error, 1)}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			var l struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving" {
				listening <- l.URL
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		checkNoRace(t, p.log())
	})
	select {
	case p.url = <-listening:
	case <-p.done:
		t.Fatalf("memtool serve ended before serving:\n%s", p.log())
	case <-time.After(hangGuard):
		t.Fatalf("memtool serve did not start:\n%s", p.log())
	}
	return p
}

func (p *serveProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// addKey runs memtool keys add and returns the token, its last line.
func addKey(t *testing.T, url, tenant, scope string) string {
	t.Helper()
	out, errOut, code := runMemtool(t, childEnv(), "", "keys", "add", "--store", url, "--tenant", tenant, "--scope", scope)
	if code != 0 {
		t.Fatalf("keys add: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

var serveClient = &http.Client{Timeout: hangGuard}

// post sends body to POST /v1/memory and returns the status and body.
func post(base, token, body string, header ...string) (int, string, error) {
	return do("POST", base+"/v1/memory", token, body, header...)
}

// do sends body to method url with token, and header's name-value pairs,
// and returns the status and body.
func do(method, url, token, body string, header ...string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := serveClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// mustPost is post that fails t on an error.
func mustPost(t *testing.T, base, token, body string, header ...string) (int, string) {
	t.Helper()
	return request(t, "POST", base, "/v1/memory", token, body, header...)
}

// The reference battery through POST /v1/memory gets the bytes memtool
// exec writes for the same lines, on a directory, SQLite and PostgreSQL.
func TestServeBattery(t *testing.T) {
	t.Parallel()
	inputs := reference.Inputs(t)
	for _, be := range tenantBackends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			served := be.URL(t)
			token := addKey(t, served, "alice", "write")
			p := startServe(t, plainBinary(t), served)
			var got strings.Builder
			for _, in := range inputs {
				status, answer := mustPost(t, p.url, token, string(in))
				if status != 200 {
					t.Fatalf("%s: HTTP %d %s", in, status, answer)
				}
				got.WriteString(answer)
			}
			want := execMemtool(t, string(bytes.Join(inputs, []byte("\n")))+"\n", "--store", be.URL(t), "--tenant", "alice")
			gotLines, wantLines := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
			if len(gotLines) != len(wantLines) {
				t.Fatalf("%d answers from serve, %d from exec", len(gotLines), len(wantLines))
			}
			for i := range wantLines {
				if gotLines[i] != wantLines[i] {
					t.Errorf("input %s:\nserve: %s\n exec: %s", inputs[i], gotLines[i], wantLines[i])
				}
			}
		})
	}
}

// The hostile corpus over HTTP, as tenant attacker, beside victim tenants
// holding files of the names it attacks: no answer holds a victim's bytes,
// the answers are those of a store without victims, no header reaches a
// victim, and the victims' memories are unchanged.
func TestServeTenantIsolation(t *testing.T) {
	t.Parallel()
	checkTenantIsolation(t, tenantBackends(), attackHTTP)
}

// attackHTTP runs the corpus lines the wire can carry through a memtool
// serve on url, with a write key of tenant attacker, after each line's
// setup. Each line is also sent naming every victim in X-Memtool-Tenant,
// which must be refused (403) without a victim's bytes.
func attackHTTP(t *testing.T, url string, lines []corpusLine) []string {
	t.Helper()
	ctx := context.Background()
	token := addKey(t, url, "attacker", "write")
	p := startServe(t, plainBinary(t), url)
	s := openTestStore(t, url, "attacker")
	var answers []string
	for _, l := range lines {
		input := l.wire(t)
		if l.Layer != "" || l.Race != nil || input == nil {
			continue
		}
		l.setUp(ctx, s)
		for _, v := range victims {
			// The server refuses the header before it reads the body: a
			// client that sent a large one (10 MiB) meanwhile could find
			// the connection closed under it, not the answer. Asked to
			// wait for the server's go-ahead, it sends none.
			if status, answer := mustPost(t, p.url, token, string(input), "X-Memtool-Tenant", v, "Expect", "100-continue"); status != 403 || strings.Contains(answer, "VICTIM") {
				t.Errorf("%s naming tenant %s: %d %.200s", l.ID, v, status, answer)
			}
		}
		status, answer := mustPost(t, p.url, token, string(input))
		answers = append(answers, fmt.Sprintf("%s %d %s", l.ID, status, answer))
	}
	return answers
}

// memtool keys: add prints the token last, once; list never shows a token
// or a hash; a revoked key is refused by a running server within seconds.
func TestServeKeys(t *testing.T) {
	t.Parallel()
	url := tenantBackends()[0].URL(t)
	out, _, code := runMemtool(t, childEnv(), "", "keys", "add", "--store", url, "--tenant", "alice", "--name", "laptop", "--expires", "30d")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	if code != 0 || !strings.HasPrefix(token, "mt_") || strings.Count(out, token) != 1 {
		t.Fatalf("keys add: %d %q", code, out)
	}
	id := strings.Split(token, "_")[1]
	list, _, code := runMemtool(t, childEnv(), "", "keys", "list", "--store", url)
	if code != 0 || !strings.Contains(list, id) || !strings.Contains(list, "laptop") || !strings.Contains(list, "active") || strings.Contains(list, token[len(token)-64:]) {
		t.Errorf("keys list: %d %q", code, list)
	}
	for _, bad := range [][]string{
		{"keys", "add", "--store", url},
		{"keys", "add", "--store", url, "--tenant", "Bad"},
		{"keys", "add", "--store", url, "--tenant", "a", "--scope", "root"},
		{"keys", "add", "--store", url, "--tenant", "a", "--expires", "soon"},
		{"keys", "revoke", "--store", url, "nope"},
		{"keys", "remove", "--store", url},
		{"keys", "add", "--store", "mem:", "--tenant", "a"},
	} {
		if _, errOut, code := runMemtool(t, childEnv(), "", bad...); code == 0 || errOut == "" {
			t.Errorf("memtool %v: exit %d, %q", bad, code, errOut)
		}
	}
	if after, _, _ := runMemtool(t, childEnv(), "", "keys", "list", "--store", url); after != list {
		t.Errorf("a refused keys command changed the keys:\n%s\nwas\n%s", after, list)
	}

	p := startServe(t, plainBinary(t), url)
	if status, _ := mustPost(t, p.url, token, `{"command":"view","path":"/memories"}`); status != 200 {
		t.Fatalf("before the revocation: %d", status)
	}
	if out, errOut, code := runMemtool(t, childEnv(), "", "keys", "revoke", "--store", url, id); code != 0 {
		t.Fatalf("keys revoke: %d %s %s", code, out, errOut)
	}
	deadline := time.Now().Add(hangGuard)
	for {
		status, _ := mustPost(t, p.url, token, `{"command":"view","path":"/memories"}`)
		if status == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a revoked key still works after %v", hangGuard)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(p.log(), token) || strings.Contains(p.log(), token[len(token)-64:]) {
		t.Error("the server logged a token")
	}
}

// SIGTERM under load: every request answered 200 is in the store, and
// memtool serve exits 0.
func TestServeSIGTERM(t *testing.T) {
	t.Parallel()
	url := tenantBackends()[0].URL(t)
	token := addKey(t, url, "alice", "write")
	p := startServe(t, plainBinary(t), url, "--rate", "-1")
	acked, _ := loadInserts(t, []string{p.url}, token, 8, func() { p.cmd.Process.Signal(syscall.SIGTERM) })
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("memtool serve after SIGTERM: %v\n%s", err, p.log())
		}
		p.done <- nil // for the cleanup
	case <-time.After(hangGuard):
		t.Fatalf("memtool serve did not exit after SIGTERM")
	}
	checkAcked(t, url, acked)
}

// loadInserts runs clients that each insert numbered lines into
// /memories/log.md (client i through bases[i%len(bases)]). Once every
// client has had 20 answers it calls stop; each client then stops at its
// first request without an answer, or after 20 more. It returns the lines
// whose insert was answered 200 without error, and how many of them were
// answered after stop.
func loadInserts(t *testing.T, bases []string, token string, clients int, stop func()) (acked []string, afterStop int) {
	t.Helper()
	if status, answer := mustPost(t, bases[0], token, `{"command":"create","path":"/memories/log.md","file_text":"log\n"}`); status != 200 || strings.Contains(answer, `"is_error":true`) {
		t.Fatalf("create: %d %s", status, answer)
	}
	var mu sync.Mutex
	var warm sync.WaitGroup
	warm.Add(clients)
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := bases[c%len(bases)]
			warming, after := true, 0
			for n := 0; after < 20; n++ {
				if warming && n == 20 {
					warm.Done()
					warming = false
				}
				select {
				case <-stopped:
					after++
				default:
				}
				line := fmt.Sprintf("client %d line %d", c, n)
				status, answer, err := post(base, token, fmt.Sprintf(`{"command":"insert","path":"/memories/log.md","insert_line":1,"insert_text":%q}`, line+"\n"))
				if err != nil || status != 200 {
					break
				}
				if !strings.Contains(answer, `"is_error":true`) {
					mu.Lock()
					acked = append(acked, line)
					if after > 0 {
						afterStop++
					}
					mu.Unlock()
				}
			}
			if warming {
				warm.Done()
			}
		}()
	}
	warm.Wait()
	stop()
	close(stopped)
	wg.Wait()
	return acked, afterStop
}

// checkAcked fails t unless every line of acked is in tenant alice's
// /memories/log.md of the store at url.
func checkAcked(t *testing.T, url string, acked []string) {
	t.Helper()
	data, err := openTestStore(t, url, "alice").ReadFile(context.Background(), "log.md", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[l] = true
	}
	lost := 0
	for _, l := range acked {
		if !have[l] {
			lost++
		}
	}
	if lost > 0 || len(acked) < 20 {
		t.Errorf("%d of %d acknowledged inserts are lost", lost, len(acked))
	}
}

// Two memtool serve processes on one PostgreSQL database, 8 clients spread
// over both: of racing creates of one name and racing renames of one file
// exactly one wins; racing inserts into one file lose no acknowledged
// line, also when one replica is killed (SIGKILL) under load, and the
// other keeps serving.
func TestServeReplicas(t *testing.T) {
	t.Parallel()
	var url string
	for _, be := range backends(false) {
		if be.Name == "postgres" {
			url = be.URL(t)
		}
	}
	if url == "" {
		t.Fatal("no postgres backend")
	}
	token := addKey(t, url, "alice", "write")
	a := startServe(t, plainBinary(t), url, "--rate", "-1")
	b := startServe(t, plainBinary(t), url, "--rate", "-1")
	bases := []string{a.url, b.url}
	const clients = 8

	// race sends body(c) from every client at once and returns the
	// clients whose answer was a success.
	race := func(body func(c int) string) []int {
		var mu sync.Mutex
		var won []int
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				status, answer, err := post(bases[c%2], token, body(c))
				if err != nil || status != 200 {
					t.Errorf("client %d: %d %v", c, status, err)
					return
				}
				if !strings.Contains(answer, `"is_error":true`) {
					mu.Lock()
					won = append(won, c)
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		return won
	}
	view := func(path string) string {
		_, answer := mustPost(t, a.url, token, fmt.Sprintf(`{"command":"view","path":%q}`, path))
		return answer
	}
	for k := range 10 {
		won := race(func(c int) string {
			return fmt.Sprintf(`{"command":"create","path":"/memories/race-%d.md","file_text":"written by client %d\n"}`, k, c)
		})
		if len(won) != 1 {
			t.Fatalf("create race %d: %d winners", k, len(won))
		}
		if got := view(fmt.Sprintf("/memories/race-%d.md", k)); !strings.Contains(got, fmt.Sprintf("written by client %d\\n", won[0])) {
			t.Errorf("create race %d won by client %d, but the file holds %s", k, won[0], got)
		}
		mustPost(t, a.url, token, fmt.Sprintf(`{"command":"create","path":"/memories/src-%d.md","file_text":"source %d\n"}`, k, k))
		won = race(func(c int) string {
			return fmt.Sprintf(`{"command":"rename","old_path":"/memories/src-%d.md","new_path":"/memories/moved-%d-by-%d.md"}`, k, k, c)
		})
		if len(won) != 1 {
			t.Fatalf("rename race %d: %d winners", k, len(won))
		}
		listing := view("/memories")
		if strings.Count(listing, fmt.Sprintf("moved-%d-by-", k)) != 1 || !strings.Contains(listing, fmt.Sprintf("moved-%d-by-%d.md", k, won[0])) || strings.Contains(listing, fmt.Sprintf("src-%d.md", k)) {
			t.Errorf("rename race %d won by client %d; the listing:\n%s", k, won[0], listing)
		}
	}

	acked, afterKill := loadInserts(t, bases, token, clients, func() { b.cmd.Process.Kill() })
	if afterKill == 0 {
		t.Error("the replica left running answered nothing after the other was killed")
	}
	checkAcked(t, url, acked)
	t.Logf("%d acknowledged inserts, %d after the kill", len(acked), afterKill)
}

// The snippets of docs/serve.md work against a running memtool serve: the
// curl one creates a file, the Python and TypeScript ones view it.
func TestServeDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]string{}
	for _, part := range strings.Split(string(doc), "```")[1:] {
		lang, code, ok := strings.Cut(part, "\n")
		if ok && lang != "" {
			blocks[lang] = append(blocks[lang], code)
		}
	}
	url := tenantBackends()[0].URL(t)
	token := addKey(t, url, "alice", "write")
	p := startServe(t, plainBinary(t), url)
	env := childEnv("MEMTOOL_URL="+p.url, "MEMTOOL_TOKEN="+token)
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		if _, err := exec.LookPath(name); err != nil {
			pgtest.Unavailable(t, name+" is not installed")
		}
		cmd := exec.Command(name, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	curl := blocks["sh"][1] // after the quick start's
	if !strings.HasPrefix(curl, "curl ") {
		t.Fatalf("the second sh block is not the curl one:\n%s", curl)
	}
	if out := run("bash", "-c", curl); out != `{"is_error":false,"content":"File created successfully at: /memories/notes.md"}`+"\n" {
		t.Errorf("curl: %q", out)
	}
	py := filepath.Join(dir, "snippet.py")
	os.WriteFile(py, []byte(blocks["python"][0]), 0o600)
	if out := run("python3", py); !strings.Contains(out, "1\tlikes tea") {
		t.Errorf("python: %q", out)
	}
	// Node runs the TypeScript snippet once its one annotation is gone.
	js := filepath.Join(dir, "snippet.mjs")
	os.WriteFile(js, []byte(strings.ReplaceAll(blocks["ts"][0], "input: unknown", "input")), 0o600)
	if out := run("node", js); !strings.Contains(out, "1\tlikes tea") {
		t.Errorf("typescript: %q", out)
	}
}

// --policy applies per tenant: a limit refuses a file over it, as a tool
// error, and the memory is unchanged. --overwrite lets a create replace a
// file.
func TestServePolicy(t *testing.T) {
	t.Parallel()
	url := tenantBackends()[0].URL(t)
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"limits":{"max_file_size":10}}`), 0o600)
	token := addKey(t, url, "alice", "write")
	p := startServe(t, plainBinary(t), url, "--policy", policy, "--overwrite")
	_, answer := mustPost(t, p.url, token, `{"command":"create","path":"/memories/big.md","file_text":"more than ten bytes"}`)
	if !strings.Contains(answer, `"is_error":true`) {
		t.Errorf("a file over the policy's limit: %s", answer)
	}
	if _, answer := mustPost(t, p.url, token, `{"command":"view","path":"/memories/big.md"}`); !strings.Contains(answer, "does not exist") {
		t.Errorf("the refused file: %s", answer)
	}
	for _, text := range []string{"short", "shorter"} {
		if _, answer := mustPost(t, p.url, token, `{"command":"create","path":"/memories/ok.md","file_text":"`+text+`"}`); strings.Contains(answer, `"is_error":true`) {
			t.Errorf("creating a file within the limit, with --overwrite: %s", answer)
		}
	}
}
