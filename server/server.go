package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/keys"
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
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
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
	// The server calls it once per tenant and keeps the result.
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
	// ErrForbidden 403; the text of both is sent, so it must hold nothing
	// secret.
	OAuth       Verifier
	OAuthRoutes []string
	// ResourceMetadata is the URL of the protected-resource metadata
	// (RFC 9728) that the WWW-Authenticate header of a 401 or 403 on an
	// OAuth route names.
	ResourceMetadata string

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
	// Logger receives the store failures, with their detail (default
	// slog.Default()), and AccessLog one line per request (default
	// Logger). Neither receives a token or a file's contents; the access
	// log holds only the fields listed in the package doc, so it needs no
	// masking of secrets that an error's detail may need.
	Logger    *slog.Logger
	AccessLog *slog.Logger
	// Registry is where the metrics are registered and what /metrics
	// serves (default: a new registry, with Go and process collectors).
	Registry *prometheus.Registry

	// The timeouts of the HTTP server (defaults: 10 s for headers, 1 min
	// to read a request, CallTimeout + 1 min to write the answer, 2 min
	// idle), and how long a shutdown waits for the requests in flight
	// (default 30 s).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	ShutdownTimeout                                           time.Duration
}

// DefaultRate and DefaultBurst are each key's rate limit when
// Config.Rate is 0.
const (
	DefaultRate  = 200
	DefaultBurst = 400
)

// A Server is the memtool HTTP server: an http.Handler, and Serve.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *metrics

	mu      sync.Mutex
	tenants map[string]*tenantMemory
	limits  map[string]*rate.Limiter // by key id
}

// tenantMemory is one tenant's memory, as a writer and as a reader sees it.
type tenantMemory struct {
	ready    chan struct{}
	err      error
	rw, read *memtool.Memory
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Keys == nil || cfg.Open == nil {
		return nil, errors.New("server: Config.Keys and Config.Open are required")
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
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AccessLog == nil {
		cfg.AccessLog = cfg.Logger
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		cfg.Registry.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
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
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), metrics: newMetrics(cfg.Registry),
		tenants: map[string]*tenantMemory{}, limits: map[string]*rate.Limiter{}}
	s.handle("GET /healthz", "/healthz", false, s.healthz)
	s.handle("GET /readyz", "/readyz", false, s.readyz)
	s.handle("GET /metrics", "/metrics", false, promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}).ServeHTTP)
	s.handle("POST /v1/memory", "/v1/memory", true, s.memory)
	s.handle("GET /v1/tenants", "/v1/tenants", true, s.listTenants)
	s.handle("GET /v1/search", "/v1/search", true, s.search)
	for pattern, h := range cfg.Mount {
		s.handle(pattern, pattern, true, h.ServeHTTP)
	}
	for pattern, h := range cfg.Public {
		s.handle(pattern, pattern, false, h.ServeHTTP)
	}
	s.handle("/", "other", false, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such route")
	})
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Serve answers the connections of ln until ctx ends, then shuts down:
// it stops taking connections and waits, at most Config.ShutdownTimeout,
// for the requests in flight, which finish as usual. It returns nil after
// a shutdown in which every request finished. With certFile and keyFile it
// serves HTTPS.
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
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		rec.Header().Set("X-Request-Id", id)
		s.metrics.inFlight.Inc()
		var p Principal
		defer func() {
			s.metrics.inFlight.Dec()
			d := time.Since(start)
			command := rec.command
			if command == "" {
				command = "-"
			}
			outcome := rec.outcome
			if outcome == "" {
				outcome = outcomeOf(rec.status)
			}
			s.metrics.requests.WithLabelValues(route, command, outcome).Inc()
			s.metrics.latency.WithLabelValues(route).Observe(d.Seconds())
			attrs := []slog.Attr{slog.String("id", id), slog.String("method", r.Method), slog.String("route", route),
				slog.Int("status", rec.status), slog.Duration("took", d), slog.Int64("bytes", rec.bytes)}
			if p.KeyID != "" {
				attrs = append(attrs, slog.String("key", p.KeyID), slog.String("tenant", p.Tenant))
			}
			if rec.command != "" {
				attrs = append(attrs, slog.String("command", rec.command), slog.String("outcome", outcome))
			}
			s.cfg.AccessLog.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		if auth {
			var ok bool
			if p, ok = s.authenticate(rec, r, route); !ok {
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		}
		h(rec, r)
	})
}

// authenticate finds the request's principal, or answers 401, 403, 429 or
// 503 itself.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, route string) (Principal, bool) {
	token, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Set("WWW-Authenticate", s.challenge(route, ""))
		writeError(w, http.StatusUnauthorized, "missing bearer token (Authorization: Bearer TOKEN)")
		return Principal{}, false
	}
	key, oauth, err := s.verify(r.Context(), route, token)
	switch {
	case oauth && (errors.Is(err, keys.ErrInvalidToken) || errors.Is(err, ErrForbidden)):
		status, code := http.StatusUnauthorized, "invalid_token"
		if errors.Is(err, ErrForbidden) {
			status, code = http.StatusForbidden, "insufficient_scope"
		}
		w.Header().Set("WWW-Authenticate", s.challenge(route, code))
		writeError(w, status, err.Error())
		return Principal{}, false
	case errors.Is(err, keys.ErrInvalidToken):
		w.Header().Set("WWW-Authenticate", s.challenge(route, "invalid_token"))
		writeError(w, http.StatusUnauthorized, "invalid, expired or revoked API key")
		return Principal{}, false
	case err != nil:
		s.metrics.storeErrors.Inc()
		s.log.Error("verifying a key", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the key store cannot be reached")
		return Principal{}, false
	}
	p := Principal{KeyID: key.ID, Tenant: key.Tenant, Scope: key.Scope}
	if named := r.Header.Get(TenantHeader); named != "" && named != key.Tenant {
		if key.Scope < Admin {
			writeError(w, http.StatusForbidden, "only an admin key may name a tenant in "+TenantHeader)
			return Principal{}, false
		}
		if err := memtool.ValidateTenant(named); err != nil {
			writeError(w, http.StatusBadRequest, TenantHeader+": "+err.Error())
			return Principal{}, false
		}
		p.Tenant = named
	}
	if wait, ok := s.allow(key.ID); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		writeError(w, http.StatusTooManyRequests, "rate limit of this API key exceeded")
		return Principal{}, false
	}
	return p, true
}

// bearer returns the token of an Authorization header.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// allow takes one request from the key's budget, or says how long to
// wait for one.
func (s *Server) allow(keyID string) (time.Duration, bool) {
	if s.cfg.Rate < 0 {
		return 0, true
	}
	s.mu.Lock()
	l := s.limits[keyID]
	if l == nil {
		if len(s.limits) >= 100000 {
			clear(s.limits)
		}
		l = rate.NewLimiter(rate.Limit(s.cfg.Rate), s.cfg.Burst)
		s.limits[keyID] = l
	}
	s.mu.Unlock()
	now := time.Now()
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return max(d, time.Second), false
	}
	return 0, true
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := s.cfg.Ready(ctx); err != nil {
			s.metrics.storeErrors.Inc()
			s.log.Error("readiness", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "the store cannot be reached"})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// memory answers POST /v1/memory: the body is one line of memtool exec.
func (s *Server) memory(w http.ResponseWriter, r *http.Request) {
	rec := w.(*recorder)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", s.cfg.MaxBody))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the body failed")
		return
	}
	line := bytes.TrimSpace(body)
	if len(line) == 0 {
		writeError(w, http.StatusBadRequest, "empty body: send one tool input object, or an array of them")
		return
	}
	m, _, err := s.Memory(r)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the memory cannot be opened")
		return
	}
	rec.command = commandOf(line)
	runner := turn.Runner{Mem: m, Timeout: s.cfg.CallTimeout, Workers: 4 * runtime.GOMAXPROCS(0)}
	answer := runner.Line(r.Context(), line)
	rec.outcome = "ok"
	if bytes.Contains(answer, []byte(`"is_error":true`)) {
		rec.outcome = "tool_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(answer, '\n'))
}

// commandOf names the command of a line, for metrics: one of the six,
// "turn" for an array, "invalid" otherwise.
func commandOf(line []byte) string {
	if line[0] == '[' {
		return "turn"
	}
	var in struct {
		Command string `json:"command"`
	}
	json.Unmarshal(line, &in)
	switch in.Command {
	case "view", "create", "str_replace", "insert", "delete", "rename":
		return in.Command
	}
	return "invalid"
}

// Memory returns the memory that r is served with: its principal's
// tenant's, read-only unless the key may write, and whether it may. A
// handler of Config.Mount calls it with its request; the server logs and
// counts an error, which is only the store's failure to open.
func (s *Server) Memory(r *http.Request) (mem *memtool.Memory, canWrite bool, err error) {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		return nil, false, errors.New("server: the request was not authenticated by this server")
	}
	t, err := s.tenant(r.Context(), p.Tenant)
	if err != nil {
		s.metrics.storeErrors.Inc()
		s.log.Error("opening a tenant's memory", "tenant", p.Tenant, "err", err)
		return nil, false, err
	}
	if p.Scope < Write {
		return t.read, false, nil
	}
	return t.rw, true, nil
}

// tenant returns the memory of tenant id, opening it on first use.
func (s *Server) tenant(ctx context.Context, id string) (*tenantMemory, error) {
	s.mu.Lock()
	t := s.tenants[id]
	if t == nil {
		t = &tenantMemory{ready: make(chan struct{})}
		s.tenants[id] = t
		s.mu.Unlock()
		store, err := s.cfg.Open(ctx, id)
		if err != nil {
			t.err = err
			s.mu.Lock()
			delete(s.tenants, id) // tried again by the next request
			s.mu.Unlock()
		} else {
			opts := s.cfg.Memory
			opts.Logger = slog.New(countingHandler{s.log.Handler(), s.metrics.storeErrors}).With("tenant", id)
			t.rw = memtool.New(store, &opts)
			t.read = memtool.New(newReadOnly(store), &opts)
		}
		close(t.ready)
	} else {
		s.mu.Unlock()
	}
	select {
	case <-t.ready:
		return t, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	if p.Scope < Admin {
		writeError(w, http.StatusForbidden, "listing tenants takes an admin key")
		return
	}
	if s.cfg.Tenants == nil {
		writeError(w, http.StatusNotImplemented, "this store cannot list its tenants")
		return
	}
	ids, err := s.cfg.Tenants(r.Context())
	if err != nil {
		s.metrics.storeErrors.Inc()
		s.log.Error("listing tenants", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the tenants cannot be listed")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]string{"tenants": append([]string{}, ids...)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers an HTTP error: {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func requestID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func outcomeOf(status int) string {
	switch {
	case status < 400:
		return "ok"
	case status == http.StatusUnauthorized:
		return "unauthorized"
	case status == http.StatusForbidden:
		return "forbidden"
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	case status < 500:
		return "client_error"
	}
	return "server_error"
}

// recorder notes what a handler answered, for the log and the metrics.
type recorder struct {
	http.ResponseWriter
	status           int
	bytes            int64
	wrote            bool
	command, outcome string
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
