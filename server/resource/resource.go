package resource

import (
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/memtool/memtool"
)

// A Resolver gives a request the store it acts on and whether it may
// change it: the server authenticates the request and picks the tenant's
// store, so the handler never sees a token. A non-nil error answers the
// request instead: an *Error is written as it is (401 for a missing or bad
// token, 429 for a rate limit, …), any other error as a 500 whose detail
// is logged, not sent. The Resolver is called once per request, before
// the request's path or body is looked at.
type Resolver func(r *http.Request) (store memtool.Store, canWrite bool, err error)

// Options tune a Handler. The zero value (or nil) gives the defaults.
type Options struct {
	// MaxFileBytes is the largest file the handler writes (a PUT body) or
	// reads. Default DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxPageSize is the most files one page of a listing holds. Default
	// DefaultMaxPageSize.
	MaxPageSize int
	// Audit, if set, serves the audit log at GET /v1/audit (see
	// AuditSource); nil: the route answers unsupported (501).
	Audit AuditSource
	// Logger receives unexpected store failures with their detail (the
	// client reads only that an internal error happened). Default
	// slog.Default().
	Logger *slog.Logger
	// WritesMayChange says that the stores may keep other bytes than a
	// write gives them (the secrets policy in redact mode): the answer to
	// a PUT then names no ETag, size or SHA-256, which would be the sent
	// body's and not the file's, and a client reads the file for them.
	WritesMayChange bool
	// CallTimeout, if positive, ends each request's work on its store
	// then, as memtool serve's tool calls end (its --timeout): a
	// store that hangs does not keep the request, and the store, held
	// until the client leaves.
	CallTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultMaxFileBytes = memtool.DefaultMaxReadSize
	DefaultMaxPageSize  = 1000
	defaultPageSize     = 100
	maxJSONBody         = 64 << 10 // a rename's body
)

// A Handler serves the resource API (see the package doc) over the stores
// its Resolver gives.
type Handler struct {
	resolve Resolver
	opts    Options
	mux     *http.ServeMux
}

// A route is one method and path the handler serves.
type route struct {
	method, path string
	write        bool // changes the store: refused to a caller that may only read
	// conditional: a change that takes If-Match and If-None-Match (a
	// PUT, one Update or create-only write of the store). Any other
	// change refuses them rather than be made unconditionally: none is
	// one conditional step of a Store.
	conditional bool
	serve       func(h *Handler, w http.ResponseWriter, r *http.Request, s memtool.Store) error
}

// routes is every route of the API; the OpenAPI document describes the
// same ones (TestOpenAPIMatchesRoutes).
var routes = []route{
	{"GET", "/v1/files", false, false, (*Handler).listFiles},
	{"GET", "/v1/file", false, false, (*Handler).readFile},
	{"PUT", "/v1/file", true, true, (*Handler).writeFile},
	{"GET", "/v1/entry", false, false, (*Handler).stat},
	{"DELETE", "/v1/entry", true, false, (*Handler).remove},
	{"GET", "/v1/dir", false, false, (*Handler).readDir},
	{"POST", "/v1/dir", true, false, (*Handler).mkdir},
	{"POST", "/v1/rename", true, false, (*Handler).rename},
	{"GET", "/v1/versions", false, false, (*Handler).listVersions},
	{"GET", "/v1/version", false, false, (*Handler).readVersion},
	{"POST", "/v1/revert", true, false, (*Handler).revert},
	{"GET", "/v1/audit", false, false, (*Handler).auditLog},
}

// OpenAPIPath is where the handler serves its OpenAPI 3 document, without
// asking the Resolver.
const OpenAPIPath = "/v1/openapi.json"

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the API's OpenAPI 3 document (JSON).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// New returns the handler of the resource API over the stores resolve
// gives. It serves the paths of Patterns, absolute (/v1/files, …), so a
// server mounts it at "/v1/" or at each pattern.
func New(resolve Resolver, opts *Options) *Handler {
	h := &Handler{resolve: resolve, mux: http.NewServeMux()}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxFileBytes <= 0 {
		h.opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if h.opts.MaxPageSize <= 0 {
		h.opts.MaxPageSize = DefaultMaxPageSize
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	for _, rt := range routes {
		h.mux.HandleFunc(rt.method+" "+rt.path, func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, rt) })
	}
	h.mux.HandleFunc("GET "+OpenAPIPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	return h
}

// Patterns returns the handler's routes that act on a store, as
// http.ServeMux patterns ("GET /v1/files", …): those a server mounts behind
// its authentication. The OpenAPI document (OpenAPIPath) is not among
// them: it needs no token, and package server serves it itself.
func Patterns() []string {
	var out []string
	for _, rt := range routes {
		out = append(out, rt.method+" "+rt.path)
	}
	return out
}

// Mount returns h under each of Patterns, as a server's Config.Mount
// takes its handlers.
func (h *Handler) Mount() map[string]http.Handler {
	m := map[string]http.Handler{}
	for _, p := range Patterns() {
		m[p] = h
	}
	return m
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// serve runs one route: resolve, check the right to write, run.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, rt route) {
	if h.opts.CallTimeout > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.CallTimeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	s, canWrite, err := h.resolve(r)
	var re *Error
	if errors.As(err, &re) {
		writeError(w, re) // the Resolver's own answer, 401 included
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if rt.write && !canWrite {
		writeError(w, &Error{http.StatusForbidden, CodeForbidden, "this key may only read"})
		return
	}
	if _, hasMatch := r.Header["If-Match"]; rt.write && !rt.conditional && hasMatch {
		// Refused also when the header is empty or its first value
		// is, which Header.Get would read as none.
		writeError(w, badRequest("this change takes no precondition (If-Match)"))
		return
	}
	if _, hasNone := r.Header["If-None-Match"]; rt.write && !rt.conditional && hasNone {
		writeError(w, badRequest("this change takes no precondition (If-None-Match)"))
		return
	}
	if err := rt.serve(h, w, r, s); err != nil {
		h.fail(w, r, err)
	}
}

// fail answers a request with err, logging a failure it does not expect.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var path string
	var l *located
	if errors.As(err, &l) {
		path = l.path
	}
	e, ok := errorFor(err, path)
	if !ok {
		h.opts.Logger.ErrorContext(r.Context(), "memtool: resource API failure", "method", r.Method, "route", r.URL.Path, "path", path, "err", err)
	}
	writeError(w, e)
}

// located is a store failure and the virtual path it is about.
type located struct {
	path string
	err  error
}

func (l *located) Error() string { return l.path + ": " + l.err.Error() }
func (l *located) Unwrap() error { return l.err }

// at says that err, if any, is about the clean name.
func at(name string, err error) error {
	if err == nil {
		return nil
	}
	return &located{memtool.VirtualPath(name), err}
}
