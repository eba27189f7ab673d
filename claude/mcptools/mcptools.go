// Package mcptools gives Claude the tools of MCP (Model Context Protocol)
// servers next to its memory, through the Anthropic SDK's own mcp package
// (github.com/anthropics/anthropic-sdk-go/v2/mcp) and the MCP Go SDK.
//
// The servers are named in a configuration file of the shape Claude
// Desktop and Claude Code read (Config). Open starts or reaches every
// server, lists its tools and returns them as tools for the SDK's runner:
//
//	servers, err := mcptools.Open(ctx, "mcp.json", nil)
//	if err != nil { … }
//	defer servers.Close()
//	runner := claude.NewRunner(&client, mem, params, servers.Option())
//
// A tool is named as Claude Code names it, mcp__<server>__<tool>, with
// characters the API refuses in a name replaced by "_" and cut to the
// API's 128 characters; a name another tool already has gets "_2" (or
// "_3", …) added, in place of its last characters when it is that long,
// so no two tools, and memory, ever share a name. With your own
// loop, declare them with claude.DeclareTools and answer their calls with
// claude.RunTools.
//
// A call's arguments reach the server as the model wrote them: an integer
// too large for a float64 (a 64-bit id) is not rounded on the way. A
// call's result reaches the model as tool_result content: text, images
// and documents as they are, and content a tool_result cannot carry (a
// resource link, audio, an image of a type the API does not take) as a
// line of text that says what it was, never as a failure of a call that
// ran. An empty text item, which the API refuses, is left out. A call
// whose context ends before its answer comes is an error that says the
// call may or may not have been made, as the server may have run it.
//
// A stdio server runs as a child process with this process's environment
// minus its ANTHROPIC_* variables (a server has no use for the API key),
// plus the server's "env". Its standard error goes to Options.Stderr.
package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	anthropicmcp "github.com/anthropics/anthropic-sdk-go/v2/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/claude"
)

// Options configure Open and Connect.
type Options struct {
	// Stderr receives the standard error of stdio servers; nil discards it.
	Stderr io.Writer
	// HTTPClient reaches http and sse servers; nil means
	// http.DefaultClient. A server's "headers" are added to each request
	// to its host.
	HTTPClient *http.Client
}

// Tools are the tools of the connected servers. Close them when the run is
// over: that ends the sessions and stops the stdio servers.
type Tools struct {
	sessions []*mcp.ClientSession
	tools    []anthropic.BetaTool
}

// Open reads the configuration file at path and connects to its servers
// (Connect).
func Open(ctx context.Context, path string, opts *Options) (*Tools, error) {
	cfg, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, cfg, opts)
}

// Connect starts or reaches every server of cfg, in the order of their
// names, and lists their tools. If one fails, those already connected are
// closed and the error names the server.
func Connect(ctx context.Context, cfg *Config, opts *Options) (*Tools, error) {
	if opts == nil {
		opts = &Options{}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "memtool", Version: "1"}, nil)
	t := &Tools{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		if err := t.connect(ctx, client, name, cfg.Servers[name], opts); err != nil {
			t.Close()
			return nil, fmt.Errorf("mcptools: server %q: %w", name, err)
		}
	}
	return t, nil
}

func (t *Tools) connect(ctx context.Context, client *mcp.Client, name string, s Server, opts *Options) error {
	transport, err := newTransport(s, opts)
	if err != nil {
		return err
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	t.sessions = append(t.sessions, session)
	var listed []*mcp.Tool
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		listed = append(listed, tool)
	}
	tools, err := anthropicmcp.NewBetaTools(listed, session)
	if err != nil {
		return err
	}
	for _, tool := range tools {
		named := &namedTool{BetaTool: tool, name: t.freeName(toolName(name, tool.Name())), session: session}
		named.schema, named.description = declaration(tool)
		t.tools = append(t.tools, named)
	}
	return nil
}

// topLevelOnly are the keywords that the Messages API refuses at the top
// level of a tool's input_schema, which MCP servers do publish.
var topLevelOnly = []string{"allOf", "anyOf", "oneOf"}

// declaration returns the input schema and description that a tool is
// declared with: its own, but for its schema's top-level allOf, anyOf
// and oneOf, which a request may not carry, and a top-level type other
// than "object" (a server's "string", or ["object","null"]), which the
// API refuses, failing every request of the run; the schema is declared
// an object schema, and what was moved goes to the end of the
// description, so the model still learns what it asks. The server checks
// the input against its whole schema.
func declaration(tool anthropic.BetaTool) (anthropic.BetaToolInputSchemaParam, string) {
	schema, description := tool.InputSchema(), tool.Description()
	moved := map[string]any{}
	if typ := string(schema.Type); typ != "" && typ != "object" {
		// The SDK keeps a type that is not a string as its JSON text.
		var v any = typ
		if json.Valid([]byte(typ)) {
			_ = json.Unmarshal([]byte(typ), &v)
		}
		moved["type"] = v
		schema.Type = "object"
	}
	for _, k := range topLevelOnly {
		if v, ok := schema.ExtraFields[k]; ok {
			moved[k] = v
		}
	}
	if len(moved) == 0 {
		return schema, description
	}
	schema.ExtraFields = maps.Clone(schema.ExtraFields)
	for k := range moved {
		delete(schema.ExtraFields, k)
	}
	data, _ := json.Marshal(moved)
	if description != "" {
		description += "\n\n"
	}
	return schema, description + "The input must also match this JSON schema: " + string(data)
}

// freeName returns name, or when a tool already has it, name with the
// first of "_2", "_3", … that none has. Two tools can come to one name:
// "a.b" and "a_b" both become a_b, and server "s" tool "x__y" meets
// server "s__x" tool "y". The runner keeps one tool per name, and the API
// refuses a request that declares a name twice.
func (t *Tools) freeName(name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(t.tools, func(tool anthropic.BetaTool) bool { return tool.Name() == n })
	}
	free := name[:min(len(name), maxName)]
	for i := 2; taken(free); i++ {
		suffix := fmt.Sprintf("_%d", i)
		free = name[:min(len(name), maxName-len(suffix))] + suffix
	}
	return free
}

func newTransport(s Server, opts *Options) (mcp.Transport, error) {
	httpClient := opts.HTTPClient
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	if len(s.Headers) > 0 {
		u, err := url.Parse(s.URL)
		if err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
		withHeaders := *httpClient
		withHeaders.Transport = &headerTransport{next: httpClient.Transport, headers: s.Headers, host: u.Hostname()}
		httpClient = &withHeaders
	}
	switch s.Type {
	case "http":
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClient}, nil
	case "sse":
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: httpClient}, nil
	case "stdio":
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = serverEnv(os.Environ(), s.Env)
		cmd.Stderr = opts.Stderr
		return &mcp.CommandTransport{Command: cmd}, nil
	}
	return nil, fmt.Errorf("unknown type %q", s.Type)
}

// serverEnv is environ without ANTHROPIC_* variables, then extra.
func serverEnv(environ []string, extra map[string]string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(strings.ToUpper(kv), "ANTHROPIC_")
	})
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// headerTransport adds a server's configured headers to each request to
// the server's host. They hold its credentials, typically: a request to
// another host, where the server or the SSE endpoint it names redirects
// the client, goes without them, as net/http sends a request's own
// headers (Authorization, Cookie) on a redirect only to the same host
// or a subdomain of it.
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
	host    string // the host name of the server's URL
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := h.next
	if next == nil {
		next = http.DefaultTransport
	}
	if !sameSite(req.URL.Hostname(), h.host) {
		return next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return next.RoundTrip(req)
}

// sameSite reports whether host is the host name server or a subdomain
// of it, the hosts net/http sends a request's own credentials to when it
// follows a redirect.
func sameSite(host, server string) bool {
	host, server = strings.ToLower(host), strings.ToLower(server)
	return host == server || !strings.ContainsAny(host, ":%") && strings.HasSuffix(host, "."+server)
}

// notInName is what the Messages API does not allow in a tool's name.
var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// maxName is the longest tool name the Messages API takes. MCP allows a
// tool's own name as long, so the prefix can make it too long.
const maxName = 128

// toolName is the name the model calls a server's tool by, as Claude Code
// names it: mcp__<server>__<tool>, with characters the API refuses in a
// name replaced by "_" (a Config built by hand may name a server with
// them too). freeName cuts it to maxName.
func toolName(server, tool string) string {
	return "mcp__" + notInName.ReplaceAllString(server, "_") + "__" + notInName.ReplaceAllString(tool, "_")
}

// namedTool is an MCP tool under the name the model calls it by, declared
// as the API takes it (declaration); the server still gets its own name
// for it.
type namedTool struct {
	anthropic.BetaTool // the SDK's adapter; BetaTool.Name() is the server's name
	name               string
	schema             anthropic.BetaToolInputSchemaParam
	description        string
	session            *mcp.ClientSession
}

// Execute calls the tool on its server, as the SDK's adapter does, but
// answers content that a tool_result cannot carry (a resource link,
// audio, an image of a type the API does not take) with a line of text
// that says what it was: the SDK's adapter fails the whole call for it,
// and the model, told that a call which ran failed, would call it again.
func (t *namedTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	name := t.BetaTool.Name()
	// Each argument goes to the server as the model wrote it: decoded to
	// a float64, an integer past 2^53 (a 64-bit id) would be rounded.
	var args map[string]json.RawMessage
	if err := json.Unmarshal(input, &args); err != nil {
		return nil, fmt.Errorf("mcp tool %s: failed to unmarshal input: %w", name, err)
	}
	result, err := t.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil && ctx.Err() != nil {
		// The server may have run the call before its answer was given
		// up on: "context canceled" alone would read as nothing done.
		return nil, fmt.Errorf("mcp tool %s: its answer was given up on (%w): the call may or may not have been made", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp tool %s: %w", name, err)
	}
	if result.IsError {
		var parts []string
		for _, c := range result.Content {
			if tc, ok := c.(*mcp.TextContent); ok && tc.Text != "" {
				parts = append(parts, tc.Text)
			}
		}
		if len(parts) == 0 {
			return nil, errors.New("tool returned an error")
		}
		return nil, errors.New(strings.Join(parts, "\n"))
	}
	if len(result.Content) == 0 && result.StructuredContent != nil {
		data, err := json.Marshal(result.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: failed to marshal structured content: %w", name, err)
		}
		return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: string(data)}}}, nil
	}
	var blocks []anthropic.BetaToolResultBlockParamContentUnion
	for _, c := range result.Content {
		if tc, ok := c.(*mcp.TextContent); ok && tc.Text == "" {
			continue // says nothing, and the API refuses an empty text block
		}
		block, err := anthropicmcp.ToBlock(c)
		var unsupported *anthropicmcp.UnsupportedValueError
		switch {
		case errors.As(err, &unsupported):
			block = anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: notShown(c, unsupported)}}
		case err != nil:
			return nil, fmt.Errorf("mcp tool %s: %w", name, err)
		}
		blocks = append(blocks, block)
	}
	return blocks, nil
}

// notShown is the text that stands for content c, which a tool_result
// cannot carry.
func notShown(c mcp.Content, why error) string {
	switch c := c.(type) {
	case *mcp.ResourceLink:
		return fmt.Sprintf("[Resource link: %s (name %q, type %q)]", c.URI, c.Name, c.MIMEType)
	case *mcp.AudioContent:
		return fmt.Sprintf("[Audio not shown (type %q, %d bytes): the API does not take audio]", c.MIMEType, len(c.Data))
	}
	return fmt.Sprintf("[Content not shown: %v]", why)
}

func (t *namedTool) Name() string                                    { return t.name }
func (t *namedTool) Description() string                             { return t.description }
func (t *namedTool) InputSchema() anthropic.BetaToolInputSchemaParam { return t.schema }

// Tools returns the tools, for a runner you build yourself or for
// claude.DeclareTools and claude.RunTools.
func (t *Tools) Tools() []anthropic.BetaTool { return t.tools }

// Option gives the tools to claude.NewRunner or claude.NewStreamingRunner
// (claude.WithTools).
func (t *Tools) Option() claude.Option { return claude.WithTools(t.tools...) }

// Close ends every session, which stops the stdio servers.
func (t *Tools) Close() error {
	var errs []error
	for _, s := range t.sessions {
		errs = append(errs, s.Close())
	}
	t.sessions = nil
	return errors.Join(errs...)
}
