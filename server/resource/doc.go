// Package resource is memtool's resource API: an HTTP handler that serves
// the files and directories of a memory (one memtool.Store) to tools and
// sync clients, by the virtual paths the model sees (/memories/…). It is
// mounted into memtool's server, which authenticates each request and
// picks the tenant's store; package remotestore is its client.
//
// # Routes
//
//	GET    /v1/files?prefix=&limit=&page=   the files below a directory, any depth, with size and SHA-256, paginated
//	GET    /v1/file?path=&limit=            a file's raw bytes, with its ETag
//	PUT    /v1/file?path=                   write a file (If-Match / If-None-Match: *)
//	GET    /v1/entry?path=                  stat: type and size
//	DELETE /v1/entry?path=&recursive=       remove a file, an empty directory, or a tree
//	GET    /v1/dir?path=                    one directory's entries, sorted by name
//	POST   /v1/dir?path=&parents=           make a directory
//	POST   /v1/rename  {"from", "to"}       rename; never replaces anything
//	GET    /v1/versions?path=               a file's kept versions (history policy)
//	GET    /v1/version?path=&n=             the raw bytes of version n
//	POST   /v1/revert?path=&n=              make version n the file's content
//	GET    /v1/audit?op=&path=&outcome=&since=&until=&limit=   the audit log's last entries
//	GET    /v1/openapi.json                 the OpenAPI 3 document of all of them
//
// Every path goes through memtool.CleanPath, the gate the model's paths
// go through, so a path the model could not use is refused here too
// (bad_path, 400). A path that ends in '/' names a directory, as the
// model's commands read it: a PUT there is refused (bad_path), and a
// DELETE or a rename (from or to such a path) finds a file there not_dir.
//
// # Preconditions
//
// A file's ETag is its content's hex SHA-256, quoted: a strong tag. A PUT
// with If-Match writes only if the file's current tag is one of those
// given (or, for *, if a file is there), as one Store.Update, so a client
// can compare and swap; with If-None-Match: * it creates the file only if
// nothing is at the path, as one WriteFile(CreateOnly). A precondition
// that does not hold is 412 and changes nothing. Without one a PUT
// replaces or creates. A GET with If-None-Match naming the current tag is
// 304. Any other change (a DELETE, a rename, a mkdir, a revert) takes no
// precondition (none is one conditional step of a Store), and one given
// is refused (bad_request), not ignored.
//
// # Listing
//
// GET /v1/files lists regular files in byte order of their paths; the
// cursor next_page names the last path of a page, so the next page goes
// on after it: a file that stays while others change is listed once.
// Each file is read for its hash when its page is made, a read that is no
// use of the file (memtool.WithSearchRead: the expiry policy does not
// count it, so listing a memory keeps none of it alive); a file too
// large to read, or one that does not open (an encrypted file under a key
// the server does not hold), is listed without its hash. The Store keeps no
// modification time, so the listing has none. No listing (GET /v1/files,
// GET /v1/dir) names a path that the path gate refuses, such as the
// .memtool… names where a store keeps a policy's data or record.
//
// # Versions
//
// When the store's stack of policies holds the history policy (package
// history), found through the chain of memtool.Wrapper, the versions
// routes list a file's kept versions, read one, and revert to one. A
// revert writes through the whole store, so the other policies apply and
// history keeps the content it replaces. Without the policy they answer
// unsupported (501).
//
// # The audit log
//
// GET /v1/audit serves the audit log (package audit) when the server gives
// Options.Audit: the last limit entries (default 1000) that pass the
// query's filters, oldest first, and always the AuditSource's bound, in
// which the server fixes the caller's tenant. Without it the route answers
// unsupported (501).
//
// # Errors
//
// A failure is {"error": {"code", "message"}} with a stable code per
// memtool error and a matching status (see Error and the table in
// errors.go): not_found 404; exists, not_dir, is_dir, irregular, escapes,
// not_empty 409; too_large 413; no_space 507; read_only and forbidden
// 403; busy 503 with Retry-After; refused 422, whose message is a
// policy's text for the model; precondition_failed 412; bad_path,
// bad_request and invalid 400; outcome_unknown 500, for a change whose
// store lost its answer (it may or may not have been made); internal
// 500. Over a remote store, the upstream server's rate limit (429) is busy,
// its refusal of this server's key (401) internal, and its forbidden (that
// key may only read) read_only: none is about the caller's key; an
// upstream answer with none of the API's codes (a proxy's page) is
// internal, or outcome_unknown for a change. Messages name only virtual paths: a store's own error text (a host
// path, a database message) is never sent; an unexpected one is logged to
// Options.Logger.
//
// # Access
//
// The handler never authenticates: New takes a Resolver, which gives each
// request its store and whether it may write, or an *Error to answer with
// (401, 429, …). A request that would change the store, from a caller that
// may only read, is refused with forbidden (403) before its path or body
// is read. PUT bodies are limited to Options.MaxFileBytes (413 beyond),
// a rename's body to 64 KiB.
package resource
