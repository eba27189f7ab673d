package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/lru"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server/resource"
)

// Scope is what a key may do: Read < Write < Admin.
type Scope = keys.Scope

// The scopes.
const (
	Read  = keys.Read
	Write = keys.Write
	Admin = keys.Admin
)

// A Principal is who a request acts for: the key that authenticated it,
// the tenant it acts on (the key's, or the one an admin key names in
// X-Memtool-Tenant) and the key's scope.
type Principal struct {
	KeyID  string
	Tenant string
	Scope  Scope
}

type principalKey struct{}

// PrincipalFrom returns the principal of an authenticated request's
// context: every handler of Config.Mount finds one there.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	st, ok := ctx.Value(principalKey{}).(*requestState)
	if !ok {
		return Principal{}, false
	}
	return st.p, true
}

// TenantHeader names the tenant an admin key acts on.
const TenantHeader = "X-Memtool-Tenant"

// Verifier checks a bearer token: *keys.Keyring is one. A token that
// opens nothing is an error wrapping keys.ErrInvalidToken.
type Verifier interface {
	Verify(ctx context.Context, token string) (keys.Key, error)
}

// Config is what a Server serves, and how.
type Config struct {
	// Keys checks the bearer tokens. Required.
	Keys Verifier
	// Open returns the memory of a tenant (with its policies). Required.
	// The server calls it once per tenant and keeps the result; its
	// context ends at CallTimeout, not with the request that needed it
	// first, since others may be waiting for it.
	Open func(ctx context.Context, tenant string) (memtool.Store, error)
	// Tenants lists the tenants, for GET /v1/tenants (nil: 501).
	Tenants func(ctx context.Context) ([]string, error)
	// Ready reports whether the store can be reached, for /readyz (nil:
	// always ready).
	Ready func(ctx context.Context) error
	// Mount adds handlers (pattern → handler, in net/http.ServeMux's
	// syntax, such as "/v1/files/") behind the server's authentication,
	// rate limit, metrics and access log: each request they get carries
	// its Principal (PrincipalFrom).
	Mount map[string]http.Handler
	// Public adds handlers (pattern → handler) served without
	// authentication or rate limit, with the access log and metrics: the
	// OAuth protected-resource metadata, which clients read before they
	// have a token.
	Public map[string]http.Handler
	// OAuth, if set, verifies the bearer tokens that are not memtool keys
	// (those that do not start with "mt_") on the routes of OAuthRoutes,
	// patterns of Mount; elsewhere only memtool keys are accepted. The
	// key it returns is the request's principal: its ID names the caller
	// in the rate limit and the access log, its Scope must be Read or
	// Write. Its errors are answered as Keys' are, and one wrapping
	// ErrForbidden 403 (ErrInsufficientScope: with the insufficient_scope
	// challenge); the text of both is sent, so it must hold nothing
	// secret.
	OAuth       Verifier
	OAuthRoutes []string
	// ResourceMetadata is the URL of the protected-resource metadata
	// (RFC 9728) that the WWW-Authenticate header of a 401 or 403 on an
	// OAuth route names.
	ResourceMetadata string
	// OAuthScope is the scope that the insufficient_scope challenge of a
	// 403 names (RFC 6750 §3): the least scope that would do.
	OAuthScope string

	// Memory are the options of each tenant's memtool.Memory (Logger is
	// set by the server).
	Memory memtool.Options
	// CallTimeout is the deadline of each tool call (default 2 minutes).
	CallTimeout time.Duration
	// MaxBody bounds a request body, in bytes (default turn.MaxLine): a
	// longer one is answered 413.
	MaxBody int64
	// Rate and Burst limit each key's requests: Rate per second, with
	// bursts of Burst. Rate 0 means DefaultRate; negative, no limit.
	Rate  float64
	Burst int
	// FailRate and FailBurst limit the failed authentications (an
	// unknown, expired or revoked token) of each client address (of an
	// IPv6 client, its /64): past them, its requests with a token are
	// answered 429 before the token is checked. FailRate 0 means
	// DefaultFailRate; negative, no limit.
	FailRate  float64
	FailBurst int
	// MaxTenants bounds the tenants' memories the server keeps open
	// (default DefaultMaxTenants), and TenantIdle how long one stays open
	// unused (default DefaultTenantIdle). A memory is dropped only when no
	// request uses it; then Release, if set, is called with what Open
	// gave, to close it. The next request of the tenant opens it again.
	MaxTenants int
	TenantIdle time.Duration
	Release    func(tenant string, store memtool.Store) error
	// Logger receives the store failures, with their detail (default
	// slog.Default()), and AccessLog one line per request (default
	// Logger). Neither receives a token or a file's contents; the access
	// log holds only the fields listed in the package doc, so it needs no
	// masking of secrets that an error's detail may need.
	Logger    *slog.Logger
	AccessLog *slog.Logger
	// The timeouts of the HTTP server (defaults: 10 s for headers, 1 min
	// to read a request, CallTimeout + 1 min to write the answer, 2 min
	// idle), and how long a shutdown waits for the requests in flight
	// (default 30 s). A turn on /v1/memory is cut off in time to write its
	// answer (WriteTimeout less a quarter of it, at most 10 s): the calls
	// it has not reached by then are answered as cancelled.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	ShutdownTimeout                                           time.Duration
}

// DefaultRate and DefaultBurst are each key's rate limit when
// Config.Rate is 0.
const (
	DefaultRate  = 200
	DefaultBurst = 400
)

// Defaults of the other bounds of Config.
const (
	DefaultFailRate   = 1  // failed authentications a second, per client address
	DefaultFailBurst  = 20 // and their burst
	DefaultMaxTenants = 10000
	DefaultTenantIdle = 10 * time.Minute
)

// ownRoutes are the server's routes beside Config.Mount's. The OpenAPI
// document (resource.OpenAPI) describes them and the resource API's.
var ownRoutes = []struct {
	pattern, route string // the ServeMux pattern; the route's name in logs and metrics
	auth           bool
	serve          func(s *Server, w http.ResponseWriter, r *http.Request)
}{
	{"GET /healthz", "/healthz", false, (*Server).healthz},
	{"GET /readyz", "/readyz", false, (*Server).readyz},
	{"GET /metrics", "/metrics", false, nil}, // metrics.serveMetrics, set in New
	{"GET " + resource.OpenAPIPath, resource.OpenAPIPath, false, (*Server).openAPI},
	{"POST /v1/memory", "/v1/memory", true, (*Server).memory},
	{"GET /v1/tenants", "/v1/tenants", true, (*Server).listTenants},
	{"GET /v1/search", "/v1/search", true, (*Server).search},
}

// Patterns returns the server's own routes as http.ServeMux patterns
// ("POST /v1/memory", …), beside those of Config.Mount.
func Patterns() []string {
	out := make([]string, len(ownRoutes))
	for i, rt := range ownRoutes {
		out[i] = rt.pattern
	}
	return out
}

// A Server is the memtool HTTP server: an http.Handler, and Serve.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *metrics

	ids *requestIDs
	// answerGrace is how long a request whose context ended has to
	// write its answer, from then or from when the answer begins (see
	// lateAnswer): a quarter of what a shutdown leaves it after
	// the contexts end (see turnBudget), so that its connection closes
	// (net/http waits half a second before) before the shutdown ends.
	answerGrace time.Duration

	mu       sync.Mutex
	tenants  *lru.Cache[*tenantMemory]
	limits   *lru.Cache[*rate.Limiter] // by key id
	failures *lru.Cache[*rate.Limiter] // failed authentications, by client address
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Keys == nil || cfg.Open == nil {
		return nil, errors.New("server: Config.Keys and Config.Open are required")
	}
	if math.IsNaN(cfg.Rate) || math.IsNaN(cfg.FailRate) {
		// The limiter takes NaN for no limit at all.
		return nil, errors.New("server: Config.Rate and Config.FailRate must be numbers")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = turn.MaxLine
	}
	if cfg.Rate == 0 {
		cfg.Rate, cfg.Burst = DefaultRate, DefaultBurst
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(math.Ceil(cfg.Rate)))
	}
	if cfg.FailRate == 0 {
		cfg.FailRate, cfg.FailBurst = DefaultFailRate, DefaultFailBurst
	}
	if cfg.FailBurst <= 0 {
		cfg.FailBurst = max(1, int(math.Ceil(cfg.FailRate)))
	}
	if cfg.MaxTenants <= 0 {
		cfg.MaxTenants = DefaultMaxTenants
	}
	if cfg.TenantIdle <= 0 {
		cfg.TenantIdle = DefaultTenantIdle
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AccessLog == nil {
		cfg.AccessLog = cfg.Logger
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = 10 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = time.Minute
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = cfg.CallTimeout + time.Minute
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), metrics: new(metrics), ids: newRequestIDs(),
		answerGrace: (cfg.ShutdownTimeout - turnBudget(cfg.ShutdownTimeout)) / 4,
		tenants:     lru.New[*tenantMemory](cfg.MaxTenants, cfg.TenantIdle),
		limits:      lru.New[*rate.Limiter](maxLimiters, limiterIdle(cfg.Rate, cfg.Burst)),
		failures:    lru.New[*rate.Limiter](maxLimiters, limiterIdle(cfg.FailRate, cfg.FailBurst)),
	}
	for _, rt := range ownRoutes {
		h := func(w http.ResponseWriter, r *http.Request) { rt.serve(s, w, r) }
		if rt.pattern == "GET /metrics" {
			h = s.metrics.serveMetrics
		}
		s.handle(rt.pattern, rt.route, rt.auth, h)
	}
	for pattern, h := range cfg.Mount {
		s.handle(pattern, pattern, true, h.ServeHTTP)
	}
	for pattern, h := range cfg.Public {
		s.handle(pattern, pattern, false, h.ServeHTTP)
	}
	s.handle("/", "other", false, s.unrouted)
	return s, nil
}

// unrouted answers a request that no route takes: 405 with the methods
// its path is served with, or 404 if there are none.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if _, pattern := s.mux.Handler(&http.Request{Method: m, URL: r.URL, Host: r.Host}); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		writeError(w, http.StatusNotFound, "no such route")
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, r.Method+" is not served here; this route takes "+strings.Join(allow, ", "))
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Serve answers the connections of ln until ctx ends, then shuts down:
// it stops taking connections and waits, at most Config.ShutdownTimeout,
// for the requests in flight, which finish as usual; the contexts of those
// still running end a quarter of it (at most 10 s) before, so that they
// answer in time (a turn, its unfinished calls as cancelled). It returns
// nil after a shutdown in which every request finished. With certFile and
// keyFile it serves HTTPS. Meanwhile it closes the tenants' memories left
// idle past Config.TenantIdle, requests or none.
func (s *Server) Serve(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// The requests' contexts end shortly before a shutdown gives up on
	// them (cutOff), so that those still running answer, a turn's
	// unfinished calls as cancelled, instead of being cut off unanswered.
	reqCtx, cutOff := context.WithCancel(context.WithoutCancel(ctx))
	defer cutOff()
	hs.BaseContext = func(net.Listener) context.Context { return reqCtx }
	swept := make(chan struct{})
	defer func() { <-swept }()
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go func() {
		defer close(swept)
		s.sweepTenants(sweepCtx)
	}()
	served := make(chan error, 1)
	go func() {
		if certFile != "" {
			served <- hs.ServeTLS(ln, certFile, keyFile)
		} else {
			served <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	defer time.AfterFunc(turnBudget(s.cfg.ShutdownTimeout), cutOff).Stop()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return fmt.Errorf("shutdown: requests still running after %v: %w", s.cfg.ShutdownTimeout, err)
	}
	<-served
	return nil
}

// handle registers a route with its access log and metrics, and, if auth,
// behind authentication and the rate limit.
func (s *Server) handle(pattern, route string, auth bool, h http.HandlerFunc) {
	latency := s.metrics.latencyOf(route)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := s.ids.next()
		rec := &recorder{ResponseWriter: w, start: start, status: http.StatusOK}
		rec.late = lateAnswer{rc: http.NewResponseController(w), grace: s.answerGrace}
		rec.Header()["X-Request-Id"] = []string{id}
		s.metrics.inFlight.Add(1)
		// Once the request's context ends (its client left, or a
		// shutdown is about to give up on it), a read of its body stops
		// waiting, and its answer has answerGrace to be written from
		// then or, if it has not begun, from when it begins, so that a
		// client gone silent part way (sending or reading) does not hold
		// the request for the read or write timeout, past the shutdown's.
		defer context.AfterFunc(r.Context(), rec.late.end)()
		var p Principal
		defer func() {
			// A panic ends the answer (net/http closes the connection, or
			// the request's stream): a server error, whatever was written,
			// logged and counted, then passed on to net/http.
			panicked := recover()
			if panicked != nil {
				rec.status, rec.outcome = http.StatusInternalServerError, "server_error"
			}
			s.metrics.inFlight.Add(-1)
			d := time.Since(start)
			command := rec.command
			if command == "" {
				command = "-"
			}
			outcome := rec.outcome
			if outcome == "" {
				outcome = outcomeOf(r.Context(), rec.status)
			}
			s.metrics.request(route, command, outcome)
			latency.Observe(d.Seconds())
			var buf [10]slog.Attr
			attrs := append(buf[:0], slog.String("id", id), slog.String("method", r.Method), slog.String("route", route),
				slog.Int("status", rec.status), slog.Duration("took", d), slog.Int64("bytes", rec.bytes))
			if p.KeyID != "" {
				attrs = append(attrs, slog.String("key", p.KeyID), slog.String("tenant", p.Tenant))
			}
			if rec.command != "" {
				attrs = append(attrs, slog.String("command", rec.command), slog.String("outcome", outcome))
			}
			// The handler itself, as LogAttrs would call it but without the
			// caller's program counter, which the access log does not show.
			if log := s.cfg.AccessLog.Handler(); log.Enabled(r.Context(), slog.LevelInfo) {
				line := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
				line.AddAttrs(attrs...)
				log.Handle(r.Context(), line)
			}
			if panicked != nil {
				panic(panicked)
			}
		}()
		if auth {
			// Each answer is one key's memory: no cache may keep it (a
			// cache keyed on the route alone would serve it to others).
			rec.Header()["Cache-Control"] = []string{"no-store"}
			var ok bool
			if p, ok = s.authenticate(rec, r, route); !ok {
				return
			}
			st := &requestState{p: p}
			defer s.releaseAll(st)
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, st))
		}
		h(rec, r)
	})
}
