package mcpserver

import (
	"bytes"
	"context"
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
// answered 401 (with a WWW-Authenticate challenge, see
// HTTPOptions.ResourceMetadataURL), one that wraps ErrForbidden 403, and
// any other 500 with a generic message, its text logged but not sent.
// The error's text is sent for 401 and 403, so it must hold nothing
// secret.
type OpenFunc func(r *http.Request) (mem *memtool.Memory, canWrite bool, err error)

// Errors an OpenFunc returns to refuse a request.
var (
	// ErrUnauthenticated: the request has no valid credentials (401).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the credentials are valid but do not allow this (403).
	ErrForbidden = errors.New("forbidden")
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
	// header of a 401 answer (RFC 9728), so that an OAuth client finds the
	// authorization server. OAuth.MetadataURL gives it.
	ResourceMetadataURL string
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
// NewIOTransport) is answered 400 with a JSON-RPC error response. A request whose identity may not write sees memory_view and
// memory_search alone.
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
		if h.opts.ResourceMetadataURL != "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, h.opts.ResourceMetadataURL))
		} else {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
		h.refuse(w, r, http.StatusUnauthorized, err.Error())
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
	r.Body = io.NopCloser(bytes.NewReader(body))
	ctx := context.WithValue(r.Context(), grantKey{}, grant{mem, canWrite})
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
	return newServer(g.mem, o, noSessionID)
}

// noSessionID issues no Mcp-Session-Id, so clients have no session to
// keep, resume or end.
func noSessionID() string { return "" }

func (h *httpHandler) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	h.log.Info("mcpserver: request refused", "status", code, "method", r.Method, "path", r.URL.Path, "reason", msg)
	http.Error(w, msg, code)
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
