package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
)

// ErrForbidden is the error of a Config.OAuth verifier for a token that is
// valid but grants nothing here (no valid tenant, say): the request is
// answered 403. One that lacks every scope of this server wraps
// ErrInsufficientScope, whose 403 carries RFC 6750's insufficient_scope
// challenge, naming Config.OAuthScope.
var ErrForbidden = errors.New("forbidden")

// ErrInsufficientScope is ErrForbidden for a token without a scope of
// this server.
var ErrInsufficientScope = fmt.Errorf("%w: insufficient scope", ErrForbidden)

// keyPrefix starts every memtool key's token (mt_<id>_<secret>); an OAuth
// access token is a JWT, three base64url parts joined by dots, which
// cannot start with it.
const keyPrefix = "mt_"

// verify checks the bearer token of a request on route. A memtool key
// goes to Config.Keys on every route; any other token goes to
// Config.OAuth on the routes of Config.OAuthRoutes, and to Config.Keys
// (which refuses it) elsewhere. oauth reports which verified it.
// A key whose tenant is not a valid tenant id is the verifier's failure
// (a key record changed by hand, say): never acted on, since tenant ""
// would name the store itself, and a filter on it (the audit log's)
// every tenant.
func (s *Server) verify(ctx context.Context, route, token string) (key keys.Key, oauth bool, err error) {
	if strings.HasPrefix(token, keyPrefix) || !s.oauthRoute(route) {
		key, err = s.cfg.Keys.Verify(ctx, token)
		if err == nil && memtool.ValidateTenant(key.Tenant) != nil {
			return keys.Key{}, false, fmt.Errorf("server: the key verifier gave key %q an invalid tenant", key.ID)
		}
		return key, false, err
	}
	key, err = s.cfg.OAuth.Verify(ctx, token)
	if err == nil && (key.ID == "" || key.Scope >= Admin || memtool.ValidateTenant(key.Tenant) != nil) {
		// Never trust a verifier to grant more than reading and writing
		// one tenant, nor to leave the rate limit without a key.
		return keys.Key{}, true, fmt.Errorf("server: the OAuth verifier granted %v on an invalid or no tenant, or to %q", key.Scope, key.ID)
	}
	return key, true, err
}

// oauthRoute reports whether OAuth tokens are accepted on route.
func (s *Server) oauthRoute(route string) bool {
	return s.cfg.OAuth != nil && slices.Contains(s.cfg.OAuthRoutes, route)
}

// challenge is the WWW-Authenticate header of a 401 or 403 answer on
// route, with the error code of RFC 6750 (if any): on an OAuth route it
// names the protected-resource metadata (RFC 9728), which is how an OAuth
// client finds the authorization server.
func (s *Server) challenge(route, code string) string {
	c := `Bearer realm="memtool"`
	if code != "" {
		c += fmt.Sprintf(`, error=%q`, code)
	}
	if code == "insufficient_scope" && s.cfg.OAuthScope != "" {
		c += fmt.Sprintf(`, scope=%q`, s.cfg.OAuthScope)
	}
	if s.oauthRoute(route) && s.cfg.ResourceMetadata != "" {
		c += fmt.Sprintf(`, resource_metadata=%q`, s.cfg.ResourceMetadata)
	}
	return c
}

// authenticate finds the request's principal, or answers 401, 403, 429 or
// 503 itself (and returns false, with the principal of the verified key
// it refused, if any).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, route string) (Principal, bool) {
	token, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Set("WWW-Authenticate", s.challenge(route, ""))
		writeError(w, http.StatusUnauthorized, "missing bearer token (Authorization: Bearer TOKEN)")
		return Principal{}, false
	}
	if wait, ok := s.failuresAllowed(r); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		writeError(w, http.StatusTooManyRequests, "too many failed authentications from this address")
		return Principal{}, false
	}
	key, oauth, err := s.verify(r.Context(), route, token)
	switch {
	case oauth && (errors.Is(err, keys.ErrInvalidToken) || errors.Is(err, ErrForbidden)):
		status, code := http.StatusUnauthorized, "invalid_token"
		switch {
		case errors.Is(err, ErrInsufficientScope):
			status, code = http.StatusForbidden, "insufficient_scope"
		case errors.Is(err, ErrForbidden):
			// Valid, and not for lack of a scope: RFC 6750 has no code
			// for it.
			status, code = http.StatusForbidden, ""
		default:
			s.authFailed(r)
		}
		w.Header().Set("WWW-Authenticate", s.challenge(route, code))
		writeError(w, status, err.Error())
		return Principal{}, false
	case errors.Is(err, keys.ErrInvalidToken):
		s.authFailed(r)
		w.Header().Set("WWW-Authenticate", s.challenge(route, "invalid_token"))
		writeError(w, http.StatusUnauthorized, "invalid, expired or revoked API key")
		return Principal{}, false
	case err != nil:
		if r.Context().Err() == nil { // else the client left: no failure of the store
			s.metrics.storeErrors.Inc()
			s.log.Error("verifying a key", "err", err)
		}
		writeError(w, http.StatusServiceUnavailable, "the key store cannot be reached")
		return Principal{}, false
	}
	// From here on a refusal still returns p, unused but for the access
	// log, which names the key it refused.
	p := Principal{KeyID: key.ID, Tenant: key.Tenant, Scope: key.Scope}
	if n := len(r.Header.Values(TenantHeader)); n > 1 {
		// Get would read the first, perhaps empty, and act on a tenant
		// the request does not name alone.
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is given %d times", TenantHeader, n))
		return p, false
	}
	if named := r.Header.Get(TenantHeader); named != "" && named != key.Tenant {
		if key.Scope < Admin {
			writeError(w, http.StatusForbidden, "only an admin key may name a tenant in "+TenantHeader)
			return p, false
		}
		if err := memtool.ValidateTenant(named); err != nil {
			writeError(w, http.StatusBadRequest, TenantHeader+": "+err.Error())
			return p, false
		}
		p.Tenant = named
	}
	if wait, ok := s.allow(key.ID); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		writeError(w, http.StatusTooManyRequests, "rate limit of this API key exceeded")
		return p, false
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
