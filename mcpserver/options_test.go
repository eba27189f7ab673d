package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/mcpcalls"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// stalledWrites is a store whose writes never finish: each waits for its
// context to end and fails with its error, as a store that stopped
// answering does under a deadline.
type stalledWrites struct {
	memtool.Store
}

func (stalledWrites) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestCallTimeout: a call past Options.CallTimeout is cancelled, says
// so, and changes nothing; the session goes on.
func TestCallTimeout(t *testing.T) {
	ctx := context.Background()
	mem := memtool.New(stalledWrites{memstore.New()}, nil)
	cs := connect(t, mem, &mcpserver.Options{CallTimeout: 10 * time.Millisecond})
	before := listing(t, mem)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/new/x.txt", "file_text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	got := mcpcalls.Result(t, res)
	if !got.IsError || !strings.Contains(got.Text, "did not finish in time") || !strings.Contains(got.Text, "nothing was changed") {
		t.Errorf("a create past the call timeout: %+v", got)
	}
	if after := listing(t, mem); after != before {
		t.Errorf("a call past its timeout changed the memory:\n%s\nwas\n%s", after, before)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories"}}); err != nil || res.IsError {
		t.Errorf("a view after the timeout: %v %+v", err, res)
	}
}

// TestVersion: the server names itself memtool, with Options.Version, or
// "dev" by default.
func TestVersion(t *testing.T) {
	mem := memtool.New(memstore.New(), nil)
	for _, c := range []struct{ version, want string }{{"", "dev"}, {"1.2.3", "1.2.3"}} {
		info := connect(t, mem, &mcpserver.Options{Version: c.version}).InitializeResult().ServerInfo
		if info.Name != "memtool" || info.Version != c.want {
			t.Errorf("Version %q: server info %+v, want memtool %s", c.version, info, c.want)
		}
	}
}

// TestHTTPServerOptions: HTTPOptions.Server configures the server of each
// request (its CallTimeout holds over HTTP too), except ReadOnly, which
// the identity's canWrite decides; an OpenFunc that gives no memory and
// no error is a 500.
func TestHTTPServerOptions(t *testing.T) {
	ctx := context.Background()
	stalled := memtool.New(stalledWrites{memstore.New()}, nil)
	open := staticTokens(map[string]access{"w": {seeded(t), true}, "r": {seeded(t), false}, "stalled": {stalled, true}, "none": {nil, true}})
	url := serve(t, 1, open, &mcpserver.HTTPOptions{Server: mcpserver.Options{ReadOnly: true, CallTimeout: 10 * time.Millisecond}})[0]
	for token, want := range map[string]int{"w": 7, "r": 2} {
		res, err := httpSession(t, token, url).ListTools(ctx, nil)
		if err != nil || len(res.Tools) != want {
			t.Errorf("token %s with Server.ReadOnly: %v, %d tools, want %d", token, err, len(res.Tools), want)
		}
	}
	res, err := httpSession(t, "stalled", url).CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/x.txt", "file_text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(mcpcalls.Result(t, res).Text, "did not finish in time") {
		t.Errorf("a stalled create over HTTP: %v %+v", err, res)
	}
	if resp, body := post(t, url, callView, map[string]string{"Authorization": "Bearer none"}); resp.StatusCode != 500 || !strings.Contains(body, "internal error") {
		t.Errorf("no memory and no error: %d %q", resp.StatusCode, body)
	}
}

// stalledReads is a store whose reads and listings never finish, as one
// that stopped answering.
type stalledReads struct {
	memtool.Store
}

func (stalledReads) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (stalledReads) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestResourcesCallTimeout: resources/read and resources/list end at
// Options.CallTimeout too, with an error, instead of holding the request
// until the client gives up; the session goes on.
func TestResourcesCallTimeout(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	if err := inner.WriteFile(ctx, "a.md", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, memtool.New(stalledReads{inner}, nil), &mcpserver.Options{CallTimeout: 10 * time.Millisecond})
	// The deadline only ends a hang; it asserts nothing about speed.
	guard, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := cs.ReadResource(guard, &mcp.ReadResourceParams{URI: mcpserver.ResourceURI("/memories/a.md")}); err == nil {
		t.Error("resources/read of a stalled store answered content")
	}
	if _, err := cs.ListResources(guard, nil); err == nil {
		t.Error("resources/list of a stalled store answered")
	}
	if guard.Err() != nil {
		t.Fatal("the requests waited for the guard, not for the call timeout")
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.md"}}); err != nil {
		t.Errorf("a call after the timeouts: %v", err)
	}
}
