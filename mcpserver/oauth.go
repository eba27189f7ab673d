package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/memtool/memtool"
)

// Defaults of OAuthConfig.
const (
	DefaultTenantClaim  = "sub"
	DefaultReadScope    = "memory:read"
	DefaultWriteScope   = "memory:write"
	DefaultFetchTimeout = 30 * time.Second
)

// OAuthConfig configures the OAuth 2.1 resource server of the MCP
// endpoint: which authorization server issues its tokens, and how a token
// names a tenant and grants access.
type OAuthConfig struct {
	// Resource is the MCP endpoint's canonical URL, such as
	// https://memory.example.com/mcp. Tokens must name it in their "aud"
	// claim (the resource indicator of RFC 8707), and the metadata
	// document names it.
	Resource string
	// Issuer is the authorization server's issuer identifier, the exact
	// "iss" of its tokens.
	Issuer string
	// JWKSURL is where the authorization server publishes its signing
	// keys. Empty: found in its metadata (RFC 8414, at
	// /.well-known/oauth-authorization-server, else OpenID Connect's
	// /.well-known/openid-configuration, under Issuer).
	JWKSURL string
	// TenantClaim is the claim whose string value is the tenant; default
	// DefaultTenantClaim ("sub").
	TenantClaim string
	// ReadScope lets a token view; WriteScope lets it view and change.
	// Defaults DefaultReadScope and DefaultWriteScope. A token with
	// neither is refused (403).
	ReadScope, WriteScope string
	// HTTPClient fetches the metadata and the keys; nil means a client
	// with a timeout of DefaultFetchTimeout, so that an issuer that stops
	// answering cannot hold the requests waiting for its keys.
	HTTPClient *http.Client
}

// A Grant is what a verified token allows.
type Grant struct {
	Tenant   string // the tenant claim's value
	CanWrite bool   // the token has the write scope
	Expiry   time.Time
}

// OAuth is the OAuth 2.1 resource server of the MCP endpoint: it verifies
// bearer JWTs (signature against the issuer's JWKS, issuer, audience,
// expiry, scopes) and serves the protected-resource metadata (RFC 9728)
// that points clients to the authorization server.
//
// Mount its metadata where clients look for it, and the MCP handler behind
// it:
//
//	oa, err := mcpserver.NewOAuth(mcpserver.OAuthConfig{Resource: "https://memory.example.com/mcp", Issuer: "https://auth.example.com"})
//	mux.Handle(oa.MetadataPath(), oa.MetadataHandler())
//	mux.Handle("/mcp", mcpserver.NewHTTPHandler(oa.Open(memoryOf), &mcpserver.HTTPOptions{
//		AllowedHosts: []string{"memory.example.com"}, ResourceMetadataURL: oa.MetadataURL()}))
type OAuth struct {
	cfg      OAuthConfig
	resource *url.URL
	keys     keyCache
}

// NewOAuth checks cfg and returns the resource server. The keys are
// fetched at the first token.
func NewOAuth(cfg OAuthConfig) (*OAuth, error) {
	res, err := url.Parse(cfg.Resource)
	if err != nil || res.Host == "" || (res.Scheme != "https" && res.Scheme != "http") || res.Fragment != "" {
		return nil, fmt.Errorf("mcpserver: the resource %q is not an absolute http(s) URL", cfg.Resource)
	}
	if !absoluteHTTP(cfg.Issuer) {
		return nil, fmt.Errorf("mcpserver: the issuer %q is not an absolute http(s) URL", cfg.Issuer)
	}
	if cfg.JWKSURL != "" && !absoluteHTTP(cfg.JWKSURL) {
		return nil, fmt.Errorf("mcpserver: the key set URL %q is not an absolute http(s) URL", cfg.JWKSURL)
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = DefaultTenantClaim
	}
	if cfg.ReadScope == "" {
		cfg.ReadScope = DefaultReadScope
	}
	if cfg.WriteScope == "" {
		cfg.WriteScope = DefaultWriteScope
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultFetchTimeout}
	}
	o := &OAuth{cfg: cfg, resource: res}
	o.keys.fetch = o.fetchKeys
	return o, nil
}

// absoluteHTTP reports whether u is an absolute http or https URL.
func absoluteHTTP(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Host != "" && (p.Scheme == "https" || p.Scheme == "http")
}

// MetadataPath is where the protected-resource metadata is served, by RFC
// 9728: /.well-known/oauth-protected-resource followed by the resource's
// path (/.well-known/oauth-protected-resource/mcp).
func (o *OAuth) MetadataPath() string {
	return "/.well-known/oauth-protected-resource" + strings.TrimSuffix(o.resource.EscapedPath(), "/")
}

// MetadataURL is the metadata's absolute URL, for the WWW-Authenticate
// challenge (HTTPOptions.ResourceMetadataURL).
func (o *OAuth) MetadataURL() string {
	return o.resource.Scheme + "://" + o.resource.Host + o.MetadataPath()
}

// Scopes are the scopes that let a token read and write, for the
// challenges of NewHTTPHandler (HTTPOptions.ReadScope and WriteScope).
func (o *OAuth) Scopes() (read, write string) { return o.cfg.ReadScope, o.cfg.WriteScope }

// MetadataHandler serves the protected-resource metadata document.
func (o *OAuth) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               o.cfg.Resource,
		AuthorizationServers:   []string{o.cfg.Issuer},
		ScopesSupported:        []string{o.cfg.ReadScope, o.cfg.WriteScope},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "memtool memory",
	})
}

// algorithms are the signature algorithms a token may use: the asymmetric
// ones of JWA that authorization servers publish keys for.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// leeway is the clock skew allowed between this server and the issuer.
const leeway = 30 * time.Second

// Verify checks a bearer token and returns what it grants. A token that is
// not a JWT signed by one of the issuer's keys, or whose issuer, audience,
// expiry (required) or not-before is wrong, wraps ErrUnauthenticated; a
// valid token without either scope wraps ErrInsufficientScope, and one
// without a valid tenant claim ErrForbidden.
func (o *OAuth) Verify(ctx context.Context, token string) (Grant, error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return Grant{}, fmt.Errorf("%w: invalid_token: not a signed JWT", ErrUnauthenticated)
	}
	key, err := o.keys.get(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return Grant{}, err
	}
	var claims jwt.Claims
	var extra map[string]any
	if err := tok.Claims(key, &claims, &extra); err != nil {
		return Grant{}, fmt.Errorf("%w: invalid_token: the signature does not verify", ErrUnauthenticated)
	}
	if claims.Expiry == nil {
		return Grant{}, fmt.Errorf("%w: invalid_token: the token has no expiry", ErrUnauthenticated)
	}
	expect := jwt.Expected{Issuer: o.cfg.Issuer, AnyAudience: jwt.Audience{o.cfg.Resource}, Time: time.Now()}
	if err := claims.ValidateWithLeeway(expect, leeway); err != nil {
		return Grant{}, fmt.Errorf("%w: invalid_token: %v", ErrUnauthenticated, strings.TrimPrefix(err.Error(), "go-jose/go-jose/jwt: "))
	}
	g := Grant{Expiry: claims.Expiry.Time()}
	scopes := scopesOf(extra)
	switch {
	case slices.Contains(scopes, o.cfg.WriteScope):
		g.CanWrite = true
	case !slices.Contains(scopes, o.cfg.ReadScope):
		return Grant{}, fmt.Errorf("%w: the token has neither %s nor %s", ErrInsufficientScope, o.cfg.ReadScope, o.cfg.WriteScope)
	}
	tenant, _ := extra[o.cfg.TenantClaim].(string)
	if err := memtool.ValidateTenant(tenant); err != nil {
		return Grant{}, fmt.Errorf("%w: the token's %s claim names no valid tenant", ErrForbidden, o.cfg.TenantClaim)
	}
	g.Tenant = tenant
	return g, nil
}

// scopesOf reads the scopes of a token: "scope", a space-separated string
// (RFC 9068), or "scp", a list or a string, as some servers write it.
func scopesOf(claims map[string]any) []string {
	var scopes []string
	for _, name := range []string{"scope", "scp"} {
		switch v := claims[name].(type) {
		case string:
			scopes = append(scopes, strings.Fields(v)...)
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					scopes = append(scopes, s)
				}
			}
		}
	}
	return scopes
}

// Open returns the OpenFunc of NewHTTPHandler for this resource server:
// the request's bearer token is verified, and memoryOf gives the memory of
// the tenant it names. memoryOf's errors are passed on (wrap ErrForbidden
// to refuse a tenant with 403).
func (o *OAuth) Open(memoryOf func(ctx context.Context, tenant string) (*memtool.Memory, error)) OpenFunc {
	return func(r *http.Request) (*memtool.Memory, bool, error) {
		fields := strings.Fields(r.Header.Get("Authorization"))
		if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
			return nil, false, fmt.Errorf("%w: a bearer token is required", ErrUnauthenticated)
		}
		g, err := o.Verify(r.Context(), fields[1])
		if err != nil {
			return nil, false, err
		}
		mem, err := memoryOf(r.Context(), g.Tenant)
		return mem, g.CanWrite, err
	}
}

// fetchKeys fetches the issuer's key set, finding its URL first if need be.
func (o *OAuth) fetchKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	jwksURL := o.cfg.JWKSURL
	if jwksURL == "" {
		var err error
		if jwksURL, err = o.discoverJWKS(ctx); err != nil {
			return nil, err
		}
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := o.getJSON(ctx, jwksURL, &doc); err != nil {
		return nil, fmt.Errorf("mcpserver: the issuer's keys: %w", err)
	}
	if doc.Keys == nil {
		return nil, fmt.Errorf("mcpserver: the issuer's keys: %s has no \"keys\" list", jwksURL)
	}
	// A key that does not parse (a type, curve or algorithm go-jose has
	// no code for, such as a post-quantum key published during a
	// rotation) is passed over, as RFC 7517 §5 says: decoding the set as
	// a whole would fail for it, and leave every token refused.
	set := &jose.JSONWebKeySet{}
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := json.Unmarshal(raw, &k); err == nil {
			set.Keys = append(set.Keys, k)
		}
	}
	return set, nil
}

// discoverJWKS reads jwks_uri from the issuer's metadata.
func (o *OAuth) discoverJWKS(ctx context.Context) (string, error) {
	iss, err := url.Parse(o.cfg.Issuer)
	if err != nil {
		return "", err // checked by NewOAuth
	}
	path := strings.TrimSuffix(iss.EscapedPath(), "/")
	origin := iss.Scheme + "://" + iss.Host
	// RFC 8414 puts the well-known part before the issuer's path; OpenID
	// Connect Discovery puts it after.
	var errs []error
	for _, wellKnown := range []string{origin + "/.well-known/oauth-authorization-server" + path, origin + path + "/.well-known/openid-configuration"} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		err := o.getJSON(ctx, wellKnown, &meta)
		switch {
		case err != nil:
			errs = append(errs, err)
		case meta.Issuer != o.cfg.Issuer:
			errs = append(errs, fmt.Errorf("%s names the issuer %q, not %q", wellKnown, meta.Issuer, o.cfg.Issuer))
		case meta.JWKSURI == "":
			errs = append(errs, fmt.Errorf("%s has no jwks_uri", wellKnown))
		default:
			return meta.JWKSURI, nil
		}
	}
	return "", fmt.Errorf("mcpserver: finding the issuer's keys: %w", errors.Join(errs...))
}

// maxDocBytes bounds a metadata document or key set.
const maxDocBytes = 1 << 20

func (o *OAuth) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocBytes+1))
	if err != nil {
		return err
	}
	if len(body) > maxDocBytes {
		return fmt.Errorf("GET %s: more than %d bytes", u, maxDocBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// Key-set refresh: keys are kept for keysMaxAge; a token signed with a key
// not in the set fetches it again, at most once per keysMinInterval, so
// that rotated keys are found and unknown key IDs cannot flood the issuer.
const (
	keysMaxAge      = time.Hour
	keysMinInterval = 30 * time.Second
)

// keyCache keeps the issuer's key set.
type keyCache struct {
	fetch func(context.Context) (*jose.JSONWebKeySet, error)
	// mu guards the fields below. It is never held during a fetch: a
	// token whose key is in the set does not wait for the issuer, which
	// may take DefaultFetchTimeout to answer or fail, only because another
	// token (of any client, valid or not) named a key that is not.
	mu       sync.Mutex
	set      *jose.JSONWebKeySet
	fetched  time.Time     // of set
	tried    time.Time     // the last fetch, whether it worked or not
	fetching chan struct{} // closed when the fetch under way ends; nil if none is
}

// get returns the public key with id kid ("" matches a set of one key).
// A failed fetch keeps the set it has; with none, the error is returned
// (the caller answers 500) until the next try is due. The request that
// starts a fetch waits for it, as does one whose key is not in the set
// while a fetch is under way; no other request waits.
func (c *keyCache) get(ctx context.Context, kid string) (any, error) {
	c.mu.Lock()
	key, ok := c.lookup(kid)
	stale := time.Since(c.fetched) > keysMaxAge
	wait := c.fetching // a fetch under way may bring the missing key
	if ok {
		wait = nil
	}
	if (!ok || stale) && c.fetching == nil && (c.tried.IsZero() || time.Since(c.tried) > keysMinInterval) {
		c.tried = time.Now()
		done := make(chan struct{})
		c.fetching = done
		c.mu.Unlock()
		// The fetch serves every request until the next one is due, so
		// it does not end with the request that made it (a client that
		// hangs up would leave the others without keys until then), only
		// at its own deadline.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultFetchTimeout)
		set, err := c.fetch(fctx)
		cancel()
		c.mu.Lock()
		if err == nil {
			c.set, c.fetched = set, c.tried
		}
		c.fetching = nil
		close(done)
		if err != nil && c.set == nil {
			c.mu.Unlock()
			return nil, err
		}
		key, ok = c.lookup(kid)
	} else if wait != nil {
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
		key, ok = c.lookup(kid)
	}
	defer c.mu.Unlock()
	if c.set == nil {
		return nil, errors.New("mcpserver: the issuer's keys could not be fetched; the next try is due within " + keysMinInterval.String())
	}
	if !ok {
		return nil, fmt.Errorf("%w: invalid_token: no key of the issuer has the token's key id", ErrUnauthenticated)
	}
	return key, nil
}

func (c *keyCache) lookup(kid string) (any, bool) {
	if c.set == nil {
		return nil, false
	}
	var signing []jose.JSONWebKey
	for _, k := range c.set.Keys {
		if k.Use == "" || k.Use == "sig" {
			signing = append(signing, k)
		}
	}
	if kid == "" && len(signing) == 1 {
		return signing[0].Public().Key, true
	}
	for _, k := range signing {
		if k.KeyID == kid && kid != "" {
			return k.Public().Key, true
		}
	}
	return nil, false
}
