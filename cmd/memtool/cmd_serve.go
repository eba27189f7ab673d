package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/memtool/memtool/internal/gcfloor"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/server"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storeurl"
)

const serveAbout = `Every request needs an API key (memtool keys add): POST /v1/memory takes
one tool input object, or an array of them (one turn), and answers what
memtool exec would answer for that line. The tenant comes from the key.
With --oauth-issuer and --oauth-resource, /mcp also accepts OAuth access
tokens (JWTs) of that authorization server, for claude.ai and Claude
Desktop connectors; memtool keys keep working. See docs/mcp.md.
SIGINT or SIGTERM stops taking requests and finishes those in flight
(within --shutdown-timeout). Replicas on one PostgreSQL database share
everything, keys included. See docs/serve.md.`

func setupServe(fs *flag.FlagSet) runFunc {
	options := serveFlags(fs)
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		o, err := options()
		if err != nil {
			return inv.usageError("%v", err)
		}
		return runServe(ctx, inv, o)
	}
}

// serveFlags defines memtool serve's flags on fs, and returns the function
// that checks them, once parsed, and gives their options.
func serveFlags(fs *flag.FlagSet) func() (serveOptions, error) {
	listen := fs.String("listen", "127.0.0.1:8080", "the address to listen on (HOST:PORT; loopback by default)")
	keysURL := fs.String("keys", "", "the store whose keys to accept (default: --store; needed for a store that keeps no keys, such as mem:)")
	cert := fs.String("tls-cert", "", "serve HTTPS with this certificate file (with --tls-key)")
	key := fs.String("tls-key", "", "the private key file of --tls-cert")
	var b server.Config // the bounds the flags set
	fs.DurationVar(&b.CallTimeout, "timeout", defaultCallTimeout, "the deadline of each tool call")
	fs.DurationVar(&b.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for the requests in flight")
	fs.Float64Var(&b.Rate, "rate", server.DefaultRate, "requests per second each key may make (negative: no limit)")
	fs.IntVar(&b.Burst, "burst", server.DefaultBurst, "the burst of --rate (0: --rate rounded up)")
	fs.Float64Var(&b.FailRate, "fail-rate", server.DefaultFailRate, "failed authentications per second each client address may make before its requests get 429 (negative: no limit)")
	fs.IntVar(&b.FailBurst, "fail-burst", server.DefaultFailBurst, "the burst of --fail-rate (0: --fail-rate rounded up)")
	fs.IntVar(&b.MaxTenants, "max-tenants", server.DefaultMaxTenants, "the most tenants' memories kept open; past it the least recently used is closed")
	fs.DurationVar(&b.TenantIdle, "tenant-idle", server.DefaultTenantIdle, "how long a tenant's memory stays open unused")
	hosts := fs.String("allowed-hosts", "", "comma-separated host names that /mcp accepts in the Host header (default: on loopback, only loopback names; elsewhere any)")
	var oc mcpserver.OAuthConfig
	fs.StringVar(&oc.Issuer, "oauth-issuer", "", "accept on /mcp the OAuth access tokens (JWTs) of this authorization server: its issuer URL, the tokens' exact \"iss\" (with --oauth-resource)")
	fs.StringVar(&oc.Resource, "oauth-resource", "", "the public URL of /mcp, such as https://memory.example.com/mcp: the audience OAuth tokens must name")
	fs.StringVar(&oc.JWKSURL, "oauth-jwks", "", "the URL of the issuer's signing keys (default: found in its metadata)")
	fs.StringVar(&oc.TenantClaim, "oauth-tenant-claim", mcpserver.DefaultTenantClaim, "the token claim whose value is the tenant")
	fs.StringVar(&oc.ReadScope, "oauth-read-scope", mcpserver.DefaultReadScope, "the scope that lets a token view and search")
	fs.StringVar(&oc.WriteScope, "oauth-write-scope", mcpserver.DefaultWriteScope, "the scope that lets a token view and change")
	return func() (serveOptions, error) {
		oa, err := oauthOf(fs, oc)
		if err != nil {
			return serveOptions{}, err
		}
		switch {
		case (*cert == "") != (*key == ""):
			return serveOptions{}, errors.New("--tls-cert and --tls-key go together")
		case b.CallTimeout <= 0 || b.ShutdownTimeout <= 0:
			return serveOptions{}, errors.New("--timeout and --shutdown-timeout must be positive")
		case math.IsNaN(b.Rate) || math.IsNaN(b.FailRate):
			return serveOptions{}, errors.New("--rate and --fail-rate must be numbers (NaN would be no limit)")
		case b.Rate == 0:
			return serveOptions{}, errors.New("--rate 0 would refuse every request; a negative rate means no limit")
		case b.FailRate == 0:
			return serveOptions{}, errors.New("--fail-rate 0 would refuse every token after the first failures; a negative rate means no limit")
		case b.Burst < 0:
			return serveOptions{}, errors.New("--burst must be 0 or more (0: --rate rounded up)")
		case b.FailBurst < 0:
			return serveOptions{}, errors.New("--fail-burst must be 0 or more (0: --fail-rate rounded up)")
		case b.MaxTenants <= 0 || b.TenantIdle <= 0:
			return serveOptions{}, errors.New("--max-tenants and --tenant-idle must be positive")
		}
		return serveOptions{listen: *listen, keys: *keysURL, cert: *cert, key: *key,
			bounds: b, hosts: splitList(*hosts), oauth: oa}, nil
	}
}

type serveOptions struct {
	listen, keys, cert, key string
	// bounds holds the server's timeouts and limits: CallTimeout,
	// ShutdownTimeout, Rate, Burst, FailRate, FailBurst, MaxTenants and
	// TenantIdle, and nothing else.
	bounds server.Config
	hosts  []string
	oauth  *mcpserver.OAuth // nil: memtool keys alone
}

// oauthOf checks the --oauth-* flags of fs and returns the resource server
// they configure, or nil if they are not given.
func oauthOf(fs *flag.FlagSet, cfg mcpserver.OAuthConfig) (*mcpserver.OAuth, error) {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "oauth-") {
			set = append(set, "--"+f.Name)
		}
	})
	switch {
	case len(set) == 0:
		return nil, nil
	case cfg.Issuer == "" || cfg.Resource == "":
		return nil, fmt.Errorf("%s: OAuth needs both --oauth-issuer and --oauth-resource", strings.Join(set, ", "))
	}
	for name, v := range map[string]string{"--oauth-tenant-claim": cfg.TenantClaim, "--oauth-read-scope": cfg.ReadScope, "--oauth-write-scope": cfg.WriteScope} {
		if v == "" || strings.ContainsFunc(v, unicode.IsSpace) || strings.ContainsAny(v, `"\`) {
			return nil, fmt.Errorf("%s %q: want one word, without spaces or quotes", name, v)
		}
	}
	if cfg.ReadScope == cfg.WriteScope {
		return nil, fmt.Errorf("--oauth-read-scope and --oauth-write-scope are both %q: a read token would write", cfg.ReadScope)
	}
	if u, err := url.Parse(cfg.Resource); err == nil && !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") {
		return nil, fmt.Errorf("--oauth-resource %q: want the public URL of /mcp, such as https://memory.example.com/mcp", cfg.Resource)
	}
	oa, err := mcpserver.NewOAuth(cfg)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "mcpserver: "))
	}
	return oa, nil
}

// oauthKeys verifies OAuth access tokens for the server, as it verifies
// memtool keys: a token's grant is a key of its tenant, with scope read
// or write (never admin), whose id "oauth:TENANT" names the caller in the
// rate limit and the access log (the token itself is never logged).
type oauthKeys struct{ oa *mcpserver.OAuth }

func (v oauthKeys) Verify(ctx context.Context, token string) (keys.Key, error) {
	g, err := v.oa.Verify(ctx, token)
	switch {
	case errors.Is(err, mcpserver.ErrUnauthenticated):
		return keys.Key{}, oauthError{err, keys.ErrInvalidToken}
	case errors.Is(err, mcpserver.ErrInsufficientScope):
		return keys.Key{}, oauthError{err, server.ErrInsufficientScope}
	case errors.Is(err, mcpserver.ErrForbidden):
		return keys.Key{}, oauthError{err, server.ErrForbidden}
	case err != nil:
		return keys.Key{}, err
	}
	scope := keys.Read
	if g.CanWrite {
		scope = keys.Write
	}
	return keys.Key{ID: "oauth:" + g.Tenant, Name: "OAuth", Tenant: g.Tenant, Scope: scope, Expires: g.Expiry}, nil
}

// oauthError is an error of the OAuth resource server, with its text (sent
// to the client: it holds no secret), classed as the server expects.
type oauthError struct{ err, class error }

func (e oauthError) Error() string   { return e.err.Error() }
func (e oauthError) Unwrap() []error { return []error{e.err, e.class} }

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// mounts are the handlers memtool serve adds to the server's own routes,
// behind its keys: the resource API (package server/resource) and MCP
// over streamable HTTP at /mcp (package mcpserver). Each serves the
// memory that srv gives the request, once srv is set. With the audit
// policy on (to a file), the resource API serves each key its tenant's
// entries of that file at GET /v1/audit.
func mounts(srv **server.Server, inv *invocation, o serveOptions, p *policyFile, logger *slog.Logger) map[string]http.Handler {
	open := func(r *http.Request) (*memtool.Memory, bool, error) { return (*srv).Memory(r) }
	opts := &resource.Options{Logger: logger, CallTimeout: o.bounds.CallTimeout}
	if p.Audit != "" && p.Audit != "-" {
		opts.Audit = server.AuditFile(p.Audit)
	}
	// A redacted write keeps other bytes than it was sent: its answer
	// must not name the sent body's ETag as the file's.
	opts.WritesMayChange = p.Secrets == "redact"
	res := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
		mem, canWrite, err := open(r)
		if err != nil {
			return nil, false, err
		}
		return mem.Store(), canWrite, nil
	}, opts)
	m := res.Mount()
	m["/mcp"] = mcpHandler(open, o, logger)
	return m
}

// mcpHandler serves MCP at /mcp. A read identity's call of a tool that
// writes is refused 403 with the scope it lacks, which is an OAuth scope
// for an OAuth token (the server names its principal oauth:TENANT) and a
// key scope for a memtool key; with OAuth on, every challenge names the
// protected-resource metadata, as the server's own do.
func mcpHandler(open mcpserver.OpenFunc, o serveOptions, logger *slog.Logger) http.Handler {
	opts := mcpserver.HTTPOptions{AllowedHosts: o.hosts, Logger: logger, WriteScope: keys.Write.String()}
	if o.oauth == nil {
		return mcpserver.NewHTTPHandler(open, &opts)
	}
	opts.ResourceMetadataURL = o.oauth.MetadataURL()
	forKeys := mcpserver.NewHTTPHandler(open, &opts)
	opts.ReadScope, opts.WriteScope = o.oauth.Scopes()
	forTokens := mcpserver.NewHTTPHandler(open, &opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, _ := server.PrincipalFrom(r.Context()); strings.HasPrefix(p.KeyID, "oauth:") {
			forTokens.ServeHTTP(w, r)
			return
		}
		forKeys.ServeHTTP(w, r)
	})
}

func runServe(ctx context.Context, inv *invocation, o serveOptions) int {
	env := inv.env
	// A server's live heap is small (a database store keeps no memory in
	// the process): without a floor the collector ran every few hundred
	// requests and took a quarter of the CPU under load. GOGC or
	// GOMEMLIMIT in the environment leave the collector as they say.
	gcfloor.Start(gcfloor.DefaultFloor)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	url := storeURL(inv.sf.store, env)
	// Errors may quote a store URL: their log masks its secrets. The
	// access log's fields hold none, and masking costs more than
	// answering a request.
	logger := slog.New(slog.NewJSONHandler(redactingWriter{env.stderr, []string{url, o.keys}}, nil))
	access := slog.New(slog.NewJSONHandler(env.stderr, nil))

	// The policy file (--policy or $MEMTOOL_POLICY) is read once, here:
	// a bad one stops the server before it creates the store, and every
	// tenant gets the same policy however the file changes meanwhile. So
	// do an address it cannot listen on and a certificate it cannot load:
	// a server that cannot start leaves no store behind.
	policy, err := flagPolicy(env, &inv.sf)
	if err != nil {
		return inv.fail(exitUsage, "%v", err)
	}
	if err := policy.auditLogOpens(); err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	if policy.Encrypt {
		// Without the keys every tenant would fail to open, and every
		// request with it.
		if _, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil {
			return inv.fail(exitStore, "%v", err)
		}
	}
	if o.cert != "" {
		if _, err := tls.LoadX509KeyPair(o.cert, o.key); err != nil {
			return inv.fail(exitFailed, "%v", err)
		}
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	defer ln.Close() // Serve closes it; this, when the store does not open
	if o.keys == "" {
		o.keys = url
	}
	if err := keys.Kept(o.keys); err != nil {
		return inv.fail(exitStore, "%v", err)
	}

	tenantOf, closer, err := storeurl.OpenTenants(ctx, url, &storeurl.Options{Create: true})
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer closer.Close()
	ring, err := keys.Open(ctx, o.keys, &keys.Options{Create: true})
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer ring.Close()
	stacks := &tenantStacks{env: env, sf: inv.sf, policy: policy, tenantOf: tenantOf}
	defer stacks.Close()

	cfg := o.bounds
	cfg.Keys, cfg.Open, cfg.Tenants, cfg.Release = ring, stacks.open, closer.Tenants, stacks.release
	// The keys are read from the store's database or directory.
	// A record that is no valid key (a hand edit) is not used, and the
	// other keys work: the server is ready, and says so once at start.
	cfg.Ready = func(ctx context.Context) error {
		if _, err := ring.List(ctx); err != nil && !errors.Is(err, keys.ErrMalformed) {
			return err
		}
		return nil
	}
	if _, err := ring.List(ctx); errors.Is(err, keys.ErrMalformed) {
		logger.Warn("key records that are not used", "error", err.Error())
	}
	cfg.Memory = memtool.Options{Overwrite: inv.sf.overwrite}
	cfg.Logger, cfg.AccessLog = logger, access
	if o.oauth != nil {
		// OAuth tokens name /mcp as their audience: they reach /mcp alone.
		cfg.OAuth, cfg.OAuthRoutes, cfg.ResourceMetadata = oauthKeys{o.oauth}, []string{"/mcp"}, o.oauth.MetadataURL()
		cfg.OAuthScope, _ = o.oauth.Scopes()                                                    // reading is the least that would do
		cfg.Public = map[string]http.Handler{o.oauth.MetadataPath(): o.oauth.MetadataHandler()} // GET, and OPTIONS for CORS
	}
	var srv *server.Server
	cfg.Mount = mounts(&srv, inv, o, policy, logger)
	srv, err = server.New(cfg)
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	scheme := "http"
	if o.cert != "" {
		scheme = "https"
	}
	logger.Info("serving", "url", scheme+"://"+ln.Addr().String(), "store", storeurl.Redact(url))
	if err := srv.Serve(ctx, ln, o.cert, o.key); err != nil && !errors.Is(err, net.ErrClosed) {
		return inv.fail(exitFailed, "%v", err)
	}
	logger.Info("stopped")
	return exitOK
}

// tenantStacks opens each tenant's memory with the policies, as the other
// verbs open one with --tenant, and closes it when the server drops it.
type tenantStacks struct {
	env      *cliEnv
	sf       storeFlags
	policy   *policyFile // read once, for every tenant
	tenantOf func(context.Context, string) (memtool.Store, error)

	mu     sync.Mutex
	stacks map[string][]*policyStack // each tenant's open stacks, oldest first
}

func (t *tenantStacks) open(ctx context.Context, id string) (memtool.Store, error) {
	raw, err := t.tenantOf(ctx, id)
	if err != nil {
		return nil, err
	}
	sf := t.sf
	sf.tenant = id
	st, err := stackPolicy(ctx, t.env, &sf, raw, t.policy)
	// The tenant's store is closed with its stack: a directory store's
	// holds two descriptors until then, however many tenants the server
	// has dropped (memtool.Tenanted's other stores close nothing).
	rawCloser, closes := raw.(io.Closer)
	if err != nil {
		if closes {
			rawCloser.Close()
		}
		return nil, fmt.Errorf("tenant %s: %w", id, err)
	}
	if closes {
		st.closers = append(st.closers, rawCloser)
	}
	t.mu.Lock()
	if t.stacks == nil {
		t.stacks = map[string][]*policyStack{}
	}
	t.stacks[id] = append(t.stacks[id], st)
	t.mu.Unlock()
	return st.top, nil
}

// release closes the stack of tenant id whose store the server no longer
// uses: the one whose top is st (the oldest if none is, which the server's
// order makes the same one: it drops a tenant's memory before it opens it
// again).
func (t *tenantStacks) release(id string, st memtool.Store) error {
	t.mu.Lock()
	open := t.stacks[id]
	if len(open) == 0 {
		t.mu.Unlock()
		return nil
	}
	i := 0
	for j, c := range open {
		if c.top == st {
			i = j
			break
		}
	}
	c := open[i]
	if len(open) == 1 {
		delete(t.stacks, id)
	} else {
		t.stacks[id] = slices.Delete(slices.Clone(open), i, i+1)
	}
	t.mu.Unlock()
	return c.Close()
}

func (t *tenantStacks) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, open := range t.stacks {
		for _, c := range open {
			errs = append(errs, c.Close())
		}
	}
	clear(t.stacks)
	return errors.Join(errs...)
}
