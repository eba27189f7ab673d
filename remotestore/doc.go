// Package remotestore is a memtool.Store kept by a memtool server, reached
// over the server's resource API (package server/resource) with a bearer
// token. With it, every memtool command and the Go API work on a memory
// the server holds: memtool --store https://memory.example.com, with the
// token in $MEMTOOL_TOKEN.
//
//	s, err := remotestore.Open("https://memory.example.com", &remotestore.Options{Token: token})
//	…
//	mem := memtool.New(s, nil)
//
// # How the Store's methods map to requests
//
// Each method but Update is one request, and the server runs it as one
// call of the store it serves, so the store's guarantees hold across every
// client:
// WriteFile with CreateOnly is a PUT with If-None-Match: * (one create
// wins); Rename and RemoveAll are one request each, done by the server's
// store in one step. Update reads the file with its ETag, calls fn, and
// writes with If-Match: if another client changed the file in between,
// the server answers 412 and Update reads and tries again (fn may be
// called more than once, as the Store contract allows), up to
// Options.MaxUpdateTries, then ErrBusy. No update is lost.
//
// # Tenants
//
// Store is memtool.Tenanted and memtool.TenantLister, so --tenant ID and
// memtool tenants work over it: Tenant(ctx, id) is a Store whose requests
// name id in X-Memtool-Tenant, which the server honours for an admin key
// only (or for a key of tenant id itself). Tenant checks that with one
// request, so a key that may not act on id fails there with an error
// wrapping fs.ErrPermission that quotes the server's 403. Tenants is
// GET /v1/tenants, which takes an admin key too. A tenant's Store has
// no tenants, as a tenant's store of any store: its Tenant and Tenants
// fail with memtool.ErrTenancy, never reaching another tenant's memory.
//
// # Errors
//
// The server's error codes map back to the same memtool errors the store
// behind it returned (ErrNotExist, ErrExist, ErrIsDir, ErrNotDir,
// ErrNotEmpty, ErrIrregular, ErrTooLarge, ErrNoSpace, ErrBusy, …), so
// Memory answers the model as it would over a local store; a policy's
// refusal comes back as the same memtool.Refusal text. A key that may only
// read gets ErrReadOnly for a change. Errors never hold the token.
//
// # Policies
//
// The server's policies (encryption, history, quotas, audit) apply to
// everything done through it. The names the storage layer keeps for
// itself (.memtool…, where policies keep their data) are out of the API's
// reach, as they are out of the model's: reading one finds nothing
// (ErrNotExist), writing one is refused with the path gate's reason,
// without a request. So memtool's --policy is for the server, not for a
// client of it: the client finds no policy record, and migrate cannot
// carry a source's policy data (versions, the record) to a server.
//
// # Timeouts, cancellation and what a lost answer means
//
// Every request honours its context and is bounded by Options.Timeout.
// One limit of the network remains: if the connection is lost or the
// timeout strikes after the server received a change, the change may
// have been made although the method returned an error. That error wraps
// memtool.ErrOutcomeUnknown, not the context's error, so Memory tells the
// model to look before trying again rather than that nothing changed (an
// insert tried again would be made twice); so does a change answered
// with a 5xx that is not the server's (a proxy's 502 or 504, which it may
// give after forwarding the change). A change that never left (the
// server unreachable, a proxy refusing the tunnel, a TLS handshake that
// failed: no try wrote the request's headers) fails with the
// transport's error. A change
// is sent at most once: never again by the transport once any of it has
// gone (HTTP/2's retry after a stream reset). Every
// change is still atomic on the server: a file has its old or its new
// content, never a mix.
//
// The reverse never happens: a method succeeds only on the API's own
// answer. A read checks the bytes it got against their ETag (the
// server's SHA-256 of them), so an answer cut short where the transport
// cannot tell, or a page that is not the API's, is an error and never a
// file's content, which Update would edit and write back. A change
// succeeds only on the API's status for it (and, for a write, its entry
// of the file), never on another success such as a proxy's page; since
// such an answer (or the API's, cut short) may follow a change made, its
// error wraps memtool.ErrOutcomeUnknown. A read
// takes at most limit bytes of an answer, and any other answer is read up
// to 1 MiB (a directory's entries or the tenants, 64 MiB): a longer one
// is not the API's, and an error (for a change, wrapping
// memtool.ErrOutcomeUnknown), so a hostile or broken server cannot fill
// the client's memory.
//
// # Security
//
// The token is sent only in the Authorization header; it is never logged,
// and it is not part of any error. A redirect is never followed, so the
// token (and the tenant) go to the store URL's server only, and a change
// goes nowhere else: it fails, naming where the server pointed (for a
// change, with an error wrapping memtool.ErrOutcomeUnknown: a proxy may
// redirect after it forwarded the change). A plain http:// URL is accepted only
// for a loopback host, so that the token never crosses a network in the
// clear; anything else takes https://.
package remotestore
