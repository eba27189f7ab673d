package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memtool/memtool/keys"
)

// ErrForbidden is the error of a Config.OAuth verifier for a token that is
// valid but grants nothing here (no scope of this server, or no valid
// tenant): the request is answered 403.
var ErrForbidden = errors.New("forbidden")

// keyPrefix starts every memtool key's token (mt_<id>_<secret>); an OAuth
// access token is a JWT, three base64url parts joined by dots, which
// cannot start with it.
const keyPrefix = "mt_"

// verify checks the bearer token of a request on route. A memtool key
// goes to Config.Keys on every route; any other token goes to
// Config.OAuth on the routes of Config.OAuthRoutes, and to Config.Keys
// (which refuses it) elsewhere. oauth reports which verified it.
func (s *Server) verify(ctx context.Context, route, token string) (key keys.Key, oauth bool, err error) {
	if strings.HasPrefix(token, keyPrefix) || !s.oauthRoute(route) {
		key, err = s.cfg.Keys.Verify(ctx, token)
		return key, false, err
	}
	key, err = s.cfg.OAuth.Verify(ctx, token)
	if err == nil && (key.ID == "" || key.Scope >= Admin) {
		// Never trust a verifier to grant more than reading and writing
		// one tenant, nor to leave the rate limit without a key.
		return keys.Key{}, true, fmt.Errorf("server: the OAuth verifier granted %v to %q", key.Scope, key.ID)
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
	if s.oauthRoute(route) && s.cfg.ResourceMetadata != "" {
		c += fmt.Sprintf(`, resource_metadata=%q`, s.cfg.ResourceMetadata)
	}
	return c
}
