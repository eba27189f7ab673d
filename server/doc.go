// Package server is memtool's HTTP server: one memory store, with its
// policies, shared by many clients, users and machines through API keys
// (package keys). memtool serve runs it; any number of replicas on one
// PostgreSQL database serve the same memory, since the server keeps no
// state of its own beyond caches (see the keys package for how long a
// revoked key may still work).
//
// # Routes
//
//   - POST /v1/memory, with Authorization: Bearer TOKEN: the body is one
//     tool input object, or an array of them (one turn). The answer (200,
//     application/json) is byte for byte the line memtool exec writes for
//     that body: {"is_error":…,"content":…} or an array of them, and a
//     newline. The tenant is the key's, never the body's. A read-scope
//     key's writes are tool errors the model reads, and change nothing.
//   - GET /v1/tenants, with an admin key: {"tenants":[…]}.
//   - GET /v1/search?q=QUERY[&regex=true][&case_sensitive=true][&path=P][&limit=N]:
//     the matching lines of the key's tenant, as memtool.Memory.Search finds
//     them: {"matches":[{"path","line","text"}…],"total":N,"unreadable":N,
//     "unreadable_paths":[…]}, the last two naming the files passed over
//     because they do not open (an encrypted file under another key, say).
//     A query Search refuses is 400 with its reason.
//   - GET /healthz (the process runs), GET /readyz (the key store, and so
//     the store's database or directory, answers), GET /metrics
//     (Prometheus), GET /v1/openapi.json (the OpenAPI document of every
//     route here and of the resource API). These need no token and reveal
//     no memory.
//   - Config.Mount's handlers, behind the same authentication. memtool
//     serve mounts the resource API (package server/resource) and MCP at
//     /mcp (package mcpserver); a mounted handler serves a request with
//     Server.Memory(r).
//
// Any other route is 404; CORS is off (no Access-Control headers).
//
// # Authentication and tenants
//
// A missing, malformed, unknown, expired or revoked token is 401 with
// WWW-Authenticate: Bearer. A key that a verifier gives with no valid tenant
// is the verifier's failure, 503, and acts on no memory. An admin key may act on another tenant by
// naming it in the X-Memtool-Tenant header; any other key naming a tenant
// not its own gets 403; the header given more than once is 400. Each key
// may make Config.Rate requests a second (bursts of Config.Burst); past
// that, 429 with Retry-After in seconds.
// Each client address (an IPv6 client's /64, which one host or link gets
// whole) may fail authentication Config.FailRate times a second (bursts
// of Config.FailBurst): past that, its requests with a token get 429 with
// Retry-After before the token is checked, so a client guessing tokens is
// slowed (behind a proxy, the proxy is the address).
//
// The server keeps each tenant's memory open between requests, at most
// Config.MaxTenants of them and each for Config.TenantIdle unused; the
// least recently used beyond that is dropped (Config.Release closes it)
// once no request uses it, and opened again when a request needs it. An
// idle memory is dropped at the latest a quarter of TenantIdle after it
// expires while Serve runs (a handler served otherwise drops memories
// only as requests come and go). The rate limiters are bounded the same
// way.
//
// Config.OAuth adds a second kind of token on the routes of
// Config.OAuthRoutes: one that is not a memtool key (mt_…) is verified by
// it (memtool serve: OAuth access tokens, on /mcp alone); elsewhere such a
// token is refused like any unknown key. On those routes a 401 or 403
// carries WWW-Authenticate: Bearer …, resource_metadata="…" (RFC 9728,
// Config.ResourceMetadata), and the verifier's reason in the body. Such a
// principal is never admin. Config.Public's routes (the metadata document)
// need no token.
//
// A handler mounted through Config.Mount finds the request's Principal
// with PrincipalFrom: the key's id, the tenant the request acts on and the
// key's Scope (Read < Write < Admin). The handler enforces the scope of
// what it does.
//
// # Operations
//
// Every request is logged once (slog, level Info, message "request") with
// a request id (also sent as X-Request-Id), the route, status, duration,
// size, key id, tenant, tool command and outcome: never a token, a file's
// contents or a host path. Error bodies are {"error": "…"} and never hold
// a host path or a store URL. Metrics: memtool_http_requests_total (by
// route, command, outcome), memtool_http_request_duration_seconds (by
// route), memtool_http_requests_in_flight, memtool_store_errors_total.
//
// Serve applies read, write and idle timeouts and a body limit (413), and
// when its context ends it stops taking connections and lets the requests
// in flight finish, within Config.ShutdownTimeout: an answer sent is a
// change made durable. The contexts of the requests still running end a
// quarter of ShutdownTimeout (at most 10 s) before it, so that they answer
// in time: a turn answers the calls it did not finish as cancelled.
package server
