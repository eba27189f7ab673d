package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	referencebattery "github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/internal/mcpcalls"
	"github.com/memtool/memtool/mcpserver"
)

// These tests drive `memtool mcp` (and the HTTP handler over a store the
// CLI opens) with real MCP clients: the go-sdk's, and the official
// TypeScript SDK's (mcpserver/testdata/tsclient), and compare every answer
// with what `memtool exec` gives for the same input.

// mcpSession starts `memtool mcp` with args and connects a go-sdk client
// to it. Its stderr goes to the returned buffer.
func mcpSession(t *testing.T, bin string, args ...string) (*mcp.ClientSession, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = childEnv()
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("memtool mcp %v: %v\nstderr:\n%s", args, err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("memtool mcp %v: %v\nstderr:\n%s", args, err, stderr)
		}
		checkNoRace(t, stderr.String())
	})
	return cs, stderr
}

// asResult is the memtool.Result an MCP tool result carries; it fails t
// unless the result is one text or image content.

// execResults runs inputs, one per line, through `memtool exec` on the
// store in dir and returns its answers.
func execResults(t *testing.T, dir string, inputs [][]byte, args ...string) []memtool.Result {
	t.Helper()
	var in strings.Builder
	for _, input := range inputs {
		in.Write(input)
		in.WriteByte('\n')
	}
	var out []memtool.Result
	for _, line := range decodeLines(t, execMemtool(t, in.String(), append([]string{"--store", dir}, args...)...)) {
		out = append(out, answerResult(t, line[0]))
	}
	if len(out) != len(inputs) {
		t.Fatalf("exec answered %d of %d inputs", len(out), len(inputs))
	}
	return out
}

// answerResult is the memtool.Result of an exec answer.
func answerResult(t *testing.T, a answer) memtool.Result {
	t.Helper()
	var text string
	if json.Unmarshal(a.Content, &text) == nil {
		return memtool.Result{Text: text, IsError: a.IsError}
	}
	var blocks []struct {
		Type   string
		Source struct {
			MediaType string `json:"media_type"`
			Data      []byte
		}
	}
	if err := json.Unmarshal(a.Content, &blocks); err != nil || len(blocks) != 1 || blocks[0].Type != "image" {
		t.Fatalf("exec answer %s: %v", a.Content, err)
	}
	return memtool.Result{Image: &memtool.Image{MediaType: blocks[0].Source.MediaType, Data: blocks[0].Source.Data}, IsError: a.IsError}
}

// mcpCalls are the battery's inputs that have a tool (all but K1-K4),
// then a view of the image testPNG puts in a store.
func mcpCalls(t *testing.T) [][]byte {
	t.Helper()
	var inputs [][]byte
	for _, in := range referencebattery.Inputs(t) {
		if _, _, err := mcpserver.ToolCall(in); err == nil {
			inputs = append(inputs, in)
		}
	}
	return append(inputs, []byte(`{"command":"view","path":"/memories/pic.png"}`))
}

// newStoreDir returns a new file store holding the picture pic.png.
func newStoreDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	img := image.NewGray(image.Rect(0, 0, 3, 1))
	img.Pix[1] = 200
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pic.png"), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sameResults fails t for each answer that is not exec's.
func sameResults(t *testing.T, inputs [][]byte, got, want []memtool.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	images, errs := 0, 0
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s:\n got %+v\nwant %+v", inputs[i], got[i], want[i])
		}
		if want[i].Image != nil {
			images++
		}
		if want[i].IsError {
			errs++
		}
	}
	if images != 1 || errs < 50 {
		t.Errorf("%d image answers and %d errors: the inputs should hold one image view and many errors", images, errs)
	}
}

// TestMCPStdioBattery: memtool mcp answers the battery, and an image view,
// as memtool exec does, through the go-sdk client.
func TestMCPStdioBattery(t *testing.T) {
	t.Parallel()
	inputs := mcpCalls(t)
	want := execResults(t, newStoreDir(t), inputs)
	cs, _ := mcpSession(t, memtoolBinary(t), "--store", newStoreDir(t))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 7 {
		t.Fatalf("tools: %v %+v", err, tools)
	}
	var got []memtool.Result
	for _, in := range inputs {
		tool, args, _ := mcpserver.ToolCall(in)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got = append(got, mcpcalls.Result(t, res))
	}
	sameResults(t, inputs, got, want)
}

// rawMCP runs memtool mcp with the JSON-RPC lines of stdin and returns its
// output.
func rawMCP(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runMemtool(t, childEnv(), stdin, append([]string{"mcp"}, args...)...)
}

const (
	rawInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	rawInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// TestMCPStdoutIsProtocol: every byte on stdout is a JSON-RPC message, and
// every request written before stdin ends is answered, also when the
// client closes stdin at once. A line that is not JSON ends the session
// (the requests before it answered) with a message on stderr and status
// 1; a store that cannot be opened is reported on stderr, with nothing on
// stdout.
func TestMCPStdoutIsProtocol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := strings.Join([]string{
		rawInitialize, rawInitialized,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/a.txt","file_text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories/nope"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"memory_protocol"}}`,
	}, "\n") + "\n"
	out, errOut, code := rawMCP(t, in, "--store", dir)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var msg struct {
			JSONRPC string
			ID      float64
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout line %q is not a JSON-RPC message", line)
		}
		ids[msg.ID] = true
	}
	if len(ids) != 5 || !strings.Contains(out, `"isError":true`) {
		t.Errorf("answers:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "hi" {
		t.Errorf("a.txt: %q %v", b, err)
	}

	out, errOut, code = rawMCP(t, rawInitialize+"\nnot json\n", "--store", dir)
	if code != exitFailed || !strings.Contains(errOut, "memtool mcp: the session ended") || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, `{"jsonrpc":"2.0","id":1,`) {
		t.Errorf("a line that is not JSON: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	out, errOut, code = rawMCP(t, rawInitialize+"\n", "--store", "nosuchscheme://x")
	if code != exitStore || out != "" || !strings.Contains(errOut, "memtool mcp:") {
		t.Errorf("a store that cannot open: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestMCPReadOnlyFlag: with --read-only the client sees memory_view and
// memory_search alone and cannot change anything, and a store that is not
// there is not made.
func TestMCPReadOnlyFlag(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	if _, _, code := rawMCP(t, rawInitialize+"\n", "--read-only", "--store", missing); code != exitStore {
		t.Errorf("--read-only on a missing store: exit %d, want %d", code, exitStore)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("--read-only made a store")
	}
	dir := newStoreDir(t)
	execMemtool(t, `{"command":"create","path":"/memories/a.txt","file_text":"one\ntwo"}`+"\n", "--store", dir)
	cs, _ := mcpSession(t, memtoolBinary(t), "--read-only", "--store", dir)
	checkNoWrites(t, func() *mcp.ClientSession { return cs }, dir)
}

// checkNoWrites checks that a session of newSession lists memory_view and
// memory_search alone, that no tool changes the store in dir, and that
// view works. Each call has a session of its own: over HTTP the refusal
// is a 403, after which the go-sdk client ends its session.
func checkNoWrites(t *testing.T, newSession func() *mcp.ClientSession, dir string) {
	t.Helper()
	ctx := context.Background()
	tools, err := newSession().ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != "memory_search" || tools.Tools[1].Name != "memory_view" {
		t.Fatalf("read-only tools: %v %+v", err, tools)
	}
	for _, call := range mcpcalls.Writes() {
		if res, err := newSession().CallTool(ctx, &call); err == nil {
			t.Errorf("%s with read access: %+v", call.Name, res)
		}
	}
	names := slices.DeleteFunc(dirNames(t, dir), func(n string) bool { return strings.HasPrefix(n, ".") })
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "one\ntwo" || !slices.Equal(names, []string{"a.txt", "pic.png"}) {
		t.Errorf("after read-only calls: a.txt %q %v, files %v", b, err, names)
	}
	res, err := newSession().CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}})
	if err != nil || res.IsError {
		t.Errorf("view with read access: %v %+v", err, res)
	}
}

// TestMCPPolicy: memtool mcp opens the store with the policies of
// --policy, as exec does, and answers as exec does under them.
func TestMCPPolicy(t *testing.T) {
	t.Parallel()
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"limits":{"max_file_size":100},"secrets":"reject"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	inputs := [][]byte{
		[]byte(`{"command":"create","path":"/memories/big.txt","file_text":"` + strings.Repeat("x", 200) + `"}`),
		[]byte(`{"command":"create","path":"/memories/key.txt","file_text":"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`),
		[]byte(`{"command":"create","path":"/memories/ok.txt","file_text":"fine"}`),
	}
	want := execResults(t, t.TempDir(), inputs, "--policy", policy)
	if !want[0].IsError || !want[1].IsError || want[2].IsError {
		t.Fatalf("exec under the policy: %+v", want)
	}
	cs, _ := mcpSession(t, memtoolBinary(t), "--store", t.TempDir(), "--policy", policy)
	callAsExec(t, cs, inputs, want)
}

// callAsExec calls each input as its tool in cs and fails t for each
// answer that is not want's.
func callAsExec(t *testing.T, cs *mcp.ClientSession, inputs [][]byte, want []memtool.Result) {
	t.Helper()
	for i, in := range inputs {
		tool, args, _ := mcpserver.ToolCall(in)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if got := mcpcalls.Result(t, res); got != want[i] {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want[i])
		}
	}
}

// TestMCPOverwrite: with --overwrite, memory_create replaces a file, as
// exec --overwrite's create does, and its description says so; without
// it, create refuses the file; with --read-only it is a usage error.
func TestMCPOverwrite(t *testing.T) {
	t.Parallel()
	inputs := [][]byte{
		[]byte(`{"command":"create","path":"/memories/a.txt","file_text":"one"}`),
		[]byte(`{"command":"create","path":"/memories/a.txt","file_text":"two"}`),
		[]byte(`{"command":"view","path":"/memories/a.txt"}`),
	}
	for _, overwrite := range []bool{false, true} {
		var flags []string
		if overwrite {
			flags = []string{"--overwrite"}
		}
		want := execResults(t, t.TempDir(), inputs, flags...)
		if want[1].IsError == overwrite {
			t.Fatalf("exec %v: the second create: %+v", flags, want[1])
		}
		cs, _ := mcpSession(t, memtoolBinary(t), append([]string{"--store", t.TempDir()}, flags...)...)
		callAsExec(t, cs, inputs, want)
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.Name == "memory_create" && strings.Contains(tool.Description, "replace the whole text") != overwrite {
				t.Errorf("%v: memory_create's description: %q", flags, tool.Description)
			}
		}
	}
	out, errOut, code := runMemtool(t, nil, "", "mcp", "--store", t.TempDir(), "--read-only", "--overwrite")
	if code != 2 || !strings.Contains(errOut, "--read-only") || out != "" {
		t.Errorf("mcp --read-only --overwrite: exit %d, stdout %q, stderr %q; want a usage error", code, out, errOut)
	}
}

// serveHTTP serves the store in dir, opened as the CLI opens it, with the
// MCP HTTP handler behind two static tokens: "write-token" and
// "read-token".
func serveHTTP(t *testing.T, dir string) string {
	t.Helper()
	env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	mem, closer, err := openMemory(context.Background(), env, &storeFlags{store: dir}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	open := func(r *http.Request) (*memtool.Memory, bool, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer write-token":
			return mem, true, nil
		case "Bearer read-token":
			return mem, false, nil
		}
		return nil, false, mcpserver.ErrUnauthenticated
	}
	srv := httptest.NewServer(mcpserver.NewHTTPHandler(open, nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// httpClient is a go-sdk client of the HTTP server at url, with token.
func httpClient(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tokenTransport(token)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type tokenTransport string

func (tok tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(tok))
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPReadTokenHTTP: over HTTP, a read token on a store the CLI opened
// cannot change it through any tool.
func TestMCPReadTokenHTTP(t *testing.T) {
	t.Parallel()
	dir := newStoreDir(t)
	execMemtool(t, `{"command":"create","path":"/memories/a.txt","file_text":"one\ntwo"}`+"\n", "--store", dir)
	url := serveHTTP(t, dir)
	checkNoWrites(t, func() *mcp.ClientSession { return httpClient(t, url, "read-token") }, dir)
}

// TestMCPNoLostUpdate: two memtool mcp processes and one HTTP client edit
// one file of one store at once; every acknowledged edit is there once and
// nothing else changed.
func TestMCPNoLostUpdate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := editPlan{writers: 3, ops: 40}
	if testing.Short() {
		plan.ops = 16
	}
	execMemtool(t, jsonLine(map[string]any{"command": "create", "path": editFile, "file_text": plan.initial()}), "--store", dir)
	bin := plainBinary(t)
	a, _ := mcpSession(t, bin, "--store", dir)
	b, _ := mcpSession(t, bin, "--store", dir)
	sessions := []*mcp.ClientSession{a, b, httpClient(t, serveHTTP(t, dir), "write-token")}
	acked := newAcked(plan.writers, plan.ops)
	var wg sync.WaitGroup
	for w, cs := range sessions {
		wg.Go(func() {
			for j := range plan.ops {
				in, _ := json.Marshal(plan.input(w, j))
				tool, args, _ := mcpserver.ToolCall(in)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Errorf("writer %d, edit %d: %v", w, j, err)
					return
				}
				if res.IsError {
					t.Errorf("writer %d, edit %d: %+v", w, j, res.Content[0])
				}
				acked[w][j] = !res.IsError
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(dir, "shared.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := plan.check(t, string(data), acked)
	t.Logf("2 stdio processes and 1 HTTP client, %d acknowledged edits, all present", n)
}

// tsClient returns the command that runs the TypeScript test client, or
// skips t if its packages are not installed (npm ci in its folder; CI
// installs them, and there a missing install fails t).
func tsClient(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "mcpserver", "testdata", "tsclient"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript MCP client is not installed (run npm ci in mcpserver/testdata/tsclient): %v", err)
		}
		t.Skipf("the TypeScript MCP client is not installed (npm ci in mcpserver/testdata/tsclient): %v", err)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
	cmd.Env = childEnv()
	return cmd
}

// tsOutput is what the TypeScript client writes: its view of the server,
// then one line per call.
type tsOutput struct {
	Server       struct{ Name string }
	Instructions string
	Tools        []struct {
		Name        string
		Annotations map[string]any
	}
	Prompts []struct{ Name string }
	Prompt  struct {
		Messages []struct {
			Role    string
			Content struct{ Text string }
		}
	}
}

type tsCall struct {
	Sent   *string
	Error  string
	Result struct {
		IsError bool
		Content []struct {
			Type     string
			Text     string
			Data     string
			MimeType string
		}
	}
}

// runTSClient feeds the calls of inputs to the TypeScript client cmd and
// returns the exec inputs for what it sent and its answers.
func runTSClient(t *testing.T, cmd *exec.Cmd, inputs [][]byte) (sent [][]byte, got []memtool.Result) {
	t.Helper()
	var stdin strings.Builder
	for _, in := range inputs {
		tool, args, _ := mcpserver.ToolCall(in)
		stdin.WriteString(jsonLine(map[string]any{"tool": tool, "arguments": args}))
	}
	cmd.Stdin = strings.NewReader(stdin.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstderr:\n%s", cmd.Args, err, stderr.String())
	}
	checkNoRace(t, stderr.String())
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() {
		t.Fatalf("no output; stderr:\n%s", stderr.String())
	}
	var head tsOutput
	if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
		t.Fatal(err)
	}
	checkTSHead(t, head)
	for i := 0; sc.Scan(); i++ {
		var c tsCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.Error != "" || c.Sent == nil || len(c.Result.Content) != 1 {
			t.Fatalf("call %s: %v %s", inputs[i], err, sc.Bytes())
		}
		tool, _, _ := mcpserver.ToolCall(inputs[i])
		input, _ := mcpserver.ToolInput(tool, json.RawMessage(*c.Sent))
		sent = append(sent, input)
		r := memtool.Result{IsError: c.Result.IsError}
		switch content := c.Result.Content[0]; content.Type {
		case "text":
			r.Text = content.Text
		case "image":
			data, err := base64.StdEncoding.DecodeString(content.Data)
			if err != nil {
				t.Fatal(err)
			}
			r.Image = &memtool.Image{MediaType: content.MimeType, Data: data}
		default:
			t.Fatalf("content type %q", content.Type)
		}
		got = append(got, r)
	}
	return sent, got
}

func checkTSHead(t *testing.T, head tsOutput) {
	t.Helper()
	var names []string
	for _, tool := range head.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"memory_create", "memory_delete", "memory_insert", "memory_rename", "memory_search", "memory_str_replace", "memory_view"}) {
		t.Errorf("tools %v", names)
	}
	if head.Server.Name != "memtool" || head.Instructions != mcpserver.Instructions || len(head.Prompts) != 1 ||
		len(head.Prompt.Messages) != 1 || !strings.HasSuffix(head.Prompt.Messages[0].Content.Text, "Your task: test task") {
		t.Errorf("server %+v, instructions %q, prompts %+v, prompt %+v", head.Server, head.Instructions, head.Prompts, head.Prompt)
	}
}

// TestMCPTypeScriptClient: the official TypeScript client, over stdio
// (memtool mcp) and over streamable HTTP with a bearer token, lists the
// tools and gets exec's answers to the battery and an image view.
func TestMCPTypeScriptClient(t *testing.T) {
	t.Parallel()
	inputs := mcpCalls(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			dir := newStoreDir(t)
			var cmd *exec.Cmd
			if transport == "stdio" {
				cmd = tsClient(t, "stdio", memtoolBinary(t), "mcp", "--store", dir)
			} else {
				cmd = tsClient(t, "http", serveHTTP(t, dir))
				cmd.Env = append(cmd.Env, "MCP_TOKEN=write-token")
			}
			sent, got := runTSClient(t, cmd, inputs)
			if len(sent) != len(inputs) {
				t.Fatalf("%d answers to %d calls", len(sent), len(inputs))
			}
			changed := 0
			for i := range sent {
				if !bytes.Equal(sent[i], inputs[i]) {
					changed++
				}
			}
			t.Logf("%d calls; the client re-encoded the arguments of %d", len(sent), changed)
			sameResults(t, sent, got, execResults(t, newStoreDir(t), sent))
		})
	}
}

// TestMCPSignal: SIGTERM ends memtool mcp with status 0 while it waits
// for the client.
func TestMCPSignal(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(memtoolBinary(t), "mcp", "--store", t.TempDir())
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, out := startPiped(t, cmd)
	defer stdin.Close()
	fmt.Fprintln(stdin, rawInitialize)
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil { // initialized: the server is serving
		t.Fatal(err)
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("memtool mcp after SIGINT: %v\nstderr:\n%s", err, stderr.String())
	}
}

// TestMCPTenants: --tenant picks the tenant's memory of a multi-tenant
// store, as for every verb: one tenant's file is not the other's.
func TestMCPTenants(t *testing.T) {
	t.Parallel()
	store := "sqlite://" + filepath.Join(t.TempDir(), "memory.db")
	ctx := context.Background()
	alice, _ := mcpSession(t, memtoolBinary(t), "--store", store, "--tenant", "alice")
	if res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/a.txt", "file_text": "alice's"}}); err != nil || res.IsError {
		t.Fatalf("alice's create: %v %+v", err, res)
	}
	bob, _ := mcpSession(t, memtoolBinary(t), "--store", store, "--tenant", "bob")
	res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}})
	if err != nil || !res.IsError {
		t.Errorf("bob viewing alice's file: %v %+v", err, res)
	}
	want := execResults(t, store, [][]byte{[]byte(`{"command":"view","path":"/memories/a.txt"}`)}, "--tenant", "alice")[0]
	res, err = alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}})
	if err != nil || mcpcalls.Result(t, res) != want || want.IsError {
		t.Errorf("alice's view: %v %+v, exec %+v", err, res, want)
	}
}

// TestMCPServeOverwrite: under memtool serve --overwrite, /mcp describes
// memory_create as replacing a file, and it does.
func TestMCPServeOverwrite(t *testing.T) {
	t.Parallel()
	store := tenantBackends()[0].URL(t)
	key := addKey(t, store, "alice", "write")
	cs := httpClient(t, startServe(t, plainBinary(t), store, "--overwrite").url+"/mcp", key)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "memory_create" })
	if i < 0 || !strings.Contains(tools.Tools[i].Description, "replace the whole text of the file already at path") {
		t.Fatalf("memory_create under --overwrite: %+v", tools.Tools)
	}
	for _, text := range []string{"first", "second"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/a.txt", "file_text": text}})
		if err != nil || res.IsError {
			t.Fatalf("create %q: %v %+v", text, err, res)
		}
	}
	if got := execMemtool(t, `{"command":"view","path":"/memories/a.txt"}`+"\n", "--store", store, "--tenant", "alice"); !strings.Contains(got, `\tsecond`) {
		t.Errorf("after two creates: %s", got)
	}
}

// TestMCPSecondSignal: a signal lets the calls in progress finish, which
// a call waiting for a held lock does not; a second signal ends memtool
// mcp at once, with 128 + its number, and the call changes nothing.
func TestMCPSecondSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			ls := fileStoreToLock(t)
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			defer inW.Close()
			cmd := exec.Command(memtoolBinary(t), append([]string{"mcp", "--timeout", "1h"}, ls.args...)...)
			cmd.Env, cmd.Stdin = childEnv(), inR
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			errPipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			c := &execProcess{cmd: cmd, stdinR: inR} // for ls.waiting
			stderr := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(errPipe)
				for sc.Scan() {
					stderr <- sc.Text()
				}
				close(stderr)
			}()
			answers := bufio.NewReader(out)
			fmt.Fprintln(inW, rawInitialize)
			if _, err := answers.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(inW, rawInitialized)
			ls.hold()
			fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/b.txt","file_text":"beta"}}}`)
			for deadline := time.Now().Add(hangGuard); !ls.waiting(c); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("memtool mcp does not wait for the lock after %v", hangGuard)
				}
			}
			next := func(what string) string {
				t.Helper()
				select {
				case line := <-stderr:
					return line
				case <-time.After(hangGuard):
					t.Fatalf("no %s in %v", what, hangGuard)
				}
				return ""
			}
			cmd.Process.Signal(sig)
			if line := next("notice of the first signal"); !strings.Contains(line, "a second signal ends memtool at once") {
				t.Fatalf("after the first signal: %q", line)
			}
			cmd.Process.Signal(sig)
			guard := time.AfterFunc(hangGuard, func() { cmd.Process.Kill() }) // then the exit status is wrong
			defer guard.Stop()
			rest, _ := io.ReadAll(answers) // ends when memtool does
			for line := range stderr {
				checkNoRace(t, line)
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 128+int(sig) || len(rest) != 0 {
				t.Errorf("after two signals: exit %d, want %d; stdout %q", code, 128+int(sig), rest)
			}
			ls.check(t)
		})
	}
}

// TestMCPHelpNamesItsTools: memtool help mcp names every tool the server
// offers, and its --read-only line every tool a read-only client sees.
func TestMCPHelpNamesItsTools(t *testing.T) {
	t.Parallel()
	out := mustRunCLI(t, nil, "", "help", "mcp")
	for _, name := range mcpserver.ToolNames(false) {
		if !strings.Contains(out, name) {
			t.Errorf("memtool help mcp does not name %s:\n%s", name, out)
		}
	}
	_, readOnly, _ := strings.Cut(out, "-read-only\n")
	readOnly, _, _ = strings.Cut(readOnly, "\n")
	for _, name := range mcpserver.ToolNames(true) {
		if !strings.Contains(readOnly, name) {
			t.Errorf("memtool help mcp: --read-only %q does not name %s", readOnly, name)
		}
	}
}
