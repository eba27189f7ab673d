package mcpserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
)

// DefaultCallTimeout is the deadline of one tool call when
// Options.CallTimeout is zero, as for memtool exec: far longer than a
// healthy store needs, so that only a store that stopped answering hits it.
const DefaultCallTimeout = 2 * time.Minute

// Options configure a server. The zero value (or nil) means the defaults.
type Options struct {
	// ReadOnly lists memory_view and memory_search alone: the other tools
	// do not exist for the client, so no call can change the memory.
	ReadOnly bool
	// Version is the server version given to clients; default "dev".
	Version string
	// CallTimeout is the deadline of one tool call, and of one
	// resources/read or resources/list; default DefaultCallTimeout. A call
	// past it is cancelled: the model is told it changed nothing, or, when
	// the deadline came after the store was sent the change, that it may
	// or may not have been made (ErrOutcomeUnknown), as the store says.
	CallTimeout time.Duration
	// Logger receives the MCP SDK's log of the session; nil discards it.
	// (Store failures go to the Memory's own logger.)
	Logger *slog.Logger
}

func (o *Options) callTimeout() time.Duration {
	if o.CallTimeout > 0 {
		return o.CallTimeout
	}
	return DefaultCallTimeout
}

// NewServer returns an MCP server whose tools run on mem: memory_view,
// memory_create, memory_str_replace, memory_insert, memory_delete,
// memory_rename and memory_search (only memory_view and memory_search if
// opts.ReadOnly). It carries the memory protocol as its instructions and
// as the prompt memory_protocol, and serves the files as resources (see
// the package doc).
//
// Run it on a transport (stdio: server.Run(ctx, NewIOTransport(os.Stdin,
// os.Stdout)), which checks each message as NewHTTPHandler does), or serve
// it over HTTP with NewHTTPHandler.
func NewServer(mem *memtool.Memory, opts *Options) *mcp.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	return newServer(mem, o, nil)
}

// newServer is NewServer; sessionID, if not nil, names sessions (see
// mcp.ServerOptions.GetSessionID).
func newServer(mem *memtool.Memory, o Options, sessionID func() string) *mcp.Server {
	version := o.Version
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "memtool", Title: "memtool memory", Version: version}, &mcp.ServerOptions{
		Instructions: Instructions,
		Logger:       o.Logger,
		// The tool and prompt lists never change during a session, the
		// resources are read afresh at each request, and the server sends
		// no log messages: no list_changed notifications, no
		// subscriptions, no logging.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
		GetSessionID: sessionID,
	})
	for i := range tools {
		d := &tools[i]
		if o.ReadOnly && !d.readOnly {
			continue
		}
		s.AddTool(d.listed(mem), d.handler(mem, &o))
	}
	addResources(s, mem, o.callTimeout())
	s.AddPrompt(protocolPrompt, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return promptResult(req.Params.Arguments["task"]), nil
	})
	return s
}

// ToolNames are the names of the tools NewServer lists, in order.
func ToolNames(readOnly bool) []string {
	var names []string
	for i := range tools {
		if !readOnly || tools[i].readOnly {
			names = append(names, tools[i].name())
		}
	}
	return names
}
