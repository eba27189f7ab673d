package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
)

// An OpenFunc says whose memory an HTTP request reaches: the Memory of the
// request's tenant, and whether the request may change it. It runs once
// per HTTP request, after the Host and Origin checks and before any MCP
// message is read, so it is where authentication belongs (a bearer token,
// an API key, or the identity a middleware put in the request's context).
//
// An error refuses the request: one that wraps ErrUnauthenticated is
// answered 401, one that wraps ErrForbidden 403, and any other 500 with a
// generic message, its text logged but not sent. The error's text is sent
// for 401 and 403, so it must hold nothing secret (never the token).
//
// A 401 and an insufficient_scope 403 carry the challenge of RFC 6750 §3,
// WWW-Authenticate: Bearer realm="memtool", with the protected-resource
// metadata (HTTPOptions.ResourceMetadataURL) if it is served: a request
// without a bearer token gets no error code (the client may not have
// known it needs one); one whose token open refuses, error="invalid_token";
// an error wrapping ErrInsufficientScope, error="insufficient_scope" and
// scope= HTTPOptions.ReadScope. An identity that may not write, calling a
// tool that writes (alone or in a batch), is answered 403 before anything
// runs, with error="insufficient_scope" and scope= HTTPOptions.WriteScope:
// so a client that can get a token with more scope (MCP's step-up
// authorization) learns which. (The go-sdk client ends its session on
// that answer; a new session goes on.)
type OpenFunc func(r *http.Request) (mem *memtool.Memory, canWrite bool, err error)

// Errors an OpenFunc returns to refuse a request.
var (
	// ErrUnauthenticated: the request has no valid credentials (401).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the credentials are valid but do not allow this (403).
	ErrForbidden = errors.New("forbidden")
	// ErrInsufficientScope (which wraps ErrForbidden): the credentials
	// are valid but grant none of the scopes that give access (403, with
	// an insufficient_scope challenge naming HTTPOptions.ReadScope).
	ErrInsufficientScope = fmt.Errorf("%w: insufficient_scope", ErrForbidden)
)

// HTTPOptions configure NewHTTPHandler. The zero value (or nil) means the
// defaults.
type HTTPOptions struct {
	// Server configures the MCP server of each request; its ReadOnly is
	// ignored (OpenFunc's canWrite decides).
	Server Options
	// AllowedHosts are the host names (without port) the Host header may
	// name: the defence against DNS rebinding, where a web page on a name
	// the attacker controls reaches a server on this machine. Empty: on a
	// connection to a loopback address only localhost, 127.0.0.1 and ::1
	// are allowed; on any other address, any host (set this behind a
	// public name).
	AllowedHosts []string
	// AllowedOrigins are the web origins (scheme://host[:port]) whose
	// requests are not refused. A request from a browser carries an Origin
	// header; it is refused (403) unless its origin is listed or is the
	// server's own (the Host header's). Requests without Origin (desktop
	// clients, command-line tools, servers) are not affected. The handler
	// sends no CORS headers and answers no preflight: a page of a listed
	// origin on another host cannot make an authenticated call from a
	// browser; the list only keeps other origins out.
	AllowedOrigins []string
	// ResourceMetadataURL, when set, is named in the WWW-Authenticate
	// header of a 401 or insufficient_scope 403 answer (RFC 9728), so that
	// an OAuth client finds the authorization server. OAuth.MetadataURL
	// gives it.
	ResourceMetadataURL string
	// ReadScope and WriteScope are the scopes a 403 insufficient_scope
	// challenge asks for (its scope attribute, RFC 6750 §3): WriteScope
	// when an identity that may not write calls a tool that writes,
	// ReadScope when open refuses credentials with ErrInsufficientScope.
	// Empty: the challenge names no scope. OAuth.Scopes gives them.
	ReadScope, WriteScope string
	// Logger receives refused requests and the MCP SDK's transport log;
	// nil discards them.
	Logger *slog.Logger
}

// maxBodyBytes bounds one HTTP request body: one tool input of
// memtool.MaxInputBytes in a JSON-RPC envelope. The MCP SDK reads a
// stateless request's body whole before it looks at it.
const maxBodyBytes = 2 * memtool.MaxInputBytes

// NewHTTPHandler returns the MCP streamable HTTP transport for memories
// that open chooses per request. It is stateless: every POST carries
// everything needed to answer it, no Mcp-Session-Id is issued, and GET
// (a server-to-client stream) is 405, so any number of server processes
// can answer any request, and a restarted server loses nothing.
//
// Each request is checked in this order: the Host header (DNS rebinding,
// see AllowedHosts), the Origin header (see AllowedOrigins), then open;
// then a body over 16 MiB (twice memtool.MaxInputBytes) is answered 413
// and runs nothing, and a body the message check refuses (see
// NewIOTransport) is answered 400 with a JSON-RPC error response. A
// request whose identity may not write sees memory_view and memory_search
// alone, and its call of another tool is answered 403 (see OpenFunc).
// When a request's context ends (its client went away, or the server is
// shutting down), its calls are cancelled, and each is answered with what
// it did, as a call cancelled over stdio is.
//
// Mount it where clients reach it, conventionally /mcp:
//
//	mux.Handle("/mcp", mcpserver.NewHTTPHandler(open, nil))
func NewHTTPHandler(open OpenFunc, opts *HTTPOptions) http.Handler {
	h := &httpHandler{open: open}
	if opts != nil {
		h.opts = *opts
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.mcp = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       h.log,
	})
	return h
}

type httpHandler struct {
	open OpenFunc
	opts HTTPOptions
	log  *slog.Logger
	mcp  *mcp.StreamableHTTPHandler
}

// grantKey carries a request's memory from ServeHTTP to server.
type grantKey struct{}

type grant struct {
	mem      *memtool.Memory
	canWrite bool
	// done is the request's own context: see ServeHTTP.
	done context.Context
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r) {
		h.refuse(w, r, http.StatusForbidden, "host not allowed: "+r.Host)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin, r.Host) {
		h.refuse(w, r, http.StatusForbidden, "origin not allowed: "+origin)
		return
	}
	mem, canWrite, err := h.open(r)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		// RFC 6750 §3.1: a request without credentials gets no error
		// code (the client may not know it needs them); one whose token
		// is refused, invalid_token.
		code := ""
		if hasBearer(r) {
			code = "invalid_token"
		}
		w.Header().Set("WWW-Authenticate", h.challenge(code, ""))
		h.refuse(w, r, http.StatusUnauthorized, err.Error())
		return
	case errors.Is(err, ErrInsufficientScope):
		w.Header().Set("WWW-Authenticate", h.challenge("insufficient_scope", h.opts.ReadScope))
		h.refuse(w, r, http.StatusForbidden, err.Error())
		return
	case errors.Is(err, ErrForbidden):
		h.refuse(w, r, http.StatusForbidden, err.Error())
		return
	case err != nil:
		h.log.Error("mcpserver: opening the memory failed", "method", r.Method, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error: the memory could not be opened", http.StatusInternalServerError)
		return
	case mem == nil:
		h.log.Error("mcpserver: OpenFunc returned no memory and no error")
		http.Error(w, "internal error: the memory could not be opened", http.StatusInternalServerError)
		return
	}
	// The SDK reads the body whole and answers 500 when it cannot, so the
	// limit is applied here, where it can be answered as what it is.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large: more than %d bytes", maxBodyBytes))
		return
	case err != nil:
		h.refuse(w, r, http.StatusBadRequest, "the request body could not be read")
		return
	}
	if r.Method == http.MethodPost && len(body) > 0 {
		if err := checkMessage(body); err != nil {
			h.log.Info("mcpserver: message refused", "path", r.URL.Path, "reason", err.msg)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(err.response())
			return
		}
	}
	if !canWrite && callsWriteTool(body) {
		// Not the tool list's "unknown tool": the tool exists, and a
		// client that can get a token with the write scope (MCP's
		// step-up authorization) learns which scope it needs.
		w.Header().Set("WWW-Authenticate", h.challenge("insufficient_scope", h.opts.WriteScope))
		h.refuse(w, r, http.StatusForbidden, "insufficient_scope: these credentials may not change the memory")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// The SDK runs each call on a context of its own, not the request's,
	// and stops waiting for the answers when the request's context ends,
	// then waits for the calls all the same: a call cut off (as memtool
	// serve cuts the requests still running shortly before a shutdown
	// gives up) ran on to its end, and its answer, even that it was done,
	// was lost, the request answered 200 with no body. So the SDK is
	// given a context that does not end, and each call (see server) one
	// that ends with the request's: a call cut off is cancelled and
	// answered with what it did.
	ctx := context.WithValue(context.WithoutCancel(r.Context()), grantKey{}, grant{mem, canWrite, r.Context()})
	h.mcp.ServeHTTP(w, r.WithContext(ctx))
}

// server builds the MCP server of one request, for the memory ServeHTTP
// put in its context.
func (h *httpHandler) server(r *http.Request) *mcp.Server {
	g, ok := r.Context().Value(grantKey{}).(grant)
	if !ok {
		return nil // not through ServeHTTP: the SDK answers 400
	}
	o := h.opts.Server
	o.ReadOnly = !g.canWrite
	if o.Logger == nil {
		o.Logger = h.opts.Logger
	}
	s := newServer(g.mem, o, noSessionID)
	s.AddReceivingMiddleware(endWith(g.done))
	return s
}

// endWith makes each request of the session end when done ends.
func endWith(done context.Context) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(done, cancel)()
			return next(ctx, method, req)
		}
	}
}

// noSessionID issues no Mcp-Session-Id, so clients have no session to
// keep, resume or end.
func noSessionID() string { return "" }

func (h *httpHandler) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	h.log.Info("mcpserver: request refused", "status", code, "method", r.Method, "path", r.URL.Path, "reason", msg)
	http.Error(w, msg, code)
}

// challenge is the WWW-Authenticate header of a 401 or 403 (RFC 6750
// §3): the error code and the scope that would do, if any, and where the
// protected-resource metadata is (RFC 9728), if it is served.
func (h *httpHandler) challenge(code, scope string) string {
	c := `Bearer realm="memtool"`
	if code != "" {
		c += fmt.Sprintf(`, error=%q`, code)
	}
	if scope != "" {
		c += fmt.Sprintf(`, scope=%q`, scope)
	}
	if h.opts.ResourceMetadataURL != "" {
		c += fmt.Sprintf(`, resource_metadata=%q`, h.opts.ResourceMetadataURL)
	}
	return c
}

// hasBearer reports whether r carries a bearer token.
func hasBearer(r *http.Request) bool {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != ""
}

// callsWriteTool reports whether body, a message checkMessage accepted,
// calls a tool that changes the memory, alone or in a batch.
func callsWriteTool(body []byte) bool {
	msgs := []json.RawMessage{body}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		// Into a new slice: json.Unmarshal would write the first member
		// over body itself, msgs[0], which the SDK then reads.
		msgs = nil
		if json.Unmarshal(b, &msgs) != nil {
			return false
		}
	}
	for _, m := range msgs {
		var req struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(m, &req) != nil || req.Method != "tools/call" {
			continue
		}
		for i := range tools {
			if tools[i].name() == req.Params.Name && !tools[i].readOnly {
				return true
			}
		}
	}
	return false
}

// hostAllowed is the DNS-rebinding check on the Host header.
func (h *httpHandler) hostAllowed(r *http.Request) bool {
	host := hostName(r.Host)
	if len(h.opts.AllowedHosts) > 0 {
		return slices.ContainsFunc(h.opts.AllowedHosts, func(a string) bool { return strings.EqualFold(a, host) })
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !isLoopback(local.String()) {
		return true
	}
	return strings.EqualFold(host, "localhost") || isLoopback(host)
}

// originAllowed reports whether a browser page of origin may call the
// server reached as host.
func (h *httpHandler) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // includes "null", the origin of sandboxed and file pages
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	canonical := u.Scheme + "://" + strings.ToLower(u.Host)
	return slices.ContainsFunc(h.opts.AllowedOrigins, func(a string) bool {
		return strings.EqualFold(strings.TrimSuffix(a, "/"), canonical)
	})
}

// hostName is host without its port and brackets.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// isLoopback reports whether addr (an IP, with or without port) is a
// loopback address.
func isLoopback(addr string) bool {
	ip, err := netip.ParseAddr(hostName(addr))
	return err == nil && ip.IsLoopback()
}
