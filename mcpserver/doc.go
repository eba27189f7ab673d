// Package mcpserver serves a memtool memory over MCP (the Model Context
// Protocol), so that clients that cannot declare the memory tool —
// Claude Code, Claude Desktop, the Claude Agent SDK, any MCP client —
// share one memory, with the same stores, policies and tenants, and the
// same answers, as the Messages API's memory tool.
//
// # Tools
//
// NewServer lists six tools, one per memory command, with the memory
// tool's parameter names and types (and memory_search):
//
//	memory_view         path, view_range      read-only
//	memory_create       path, file_text
//	memory_str_replace  path, old_str, new_str
//	memory_insert       path, insert_line, insert_text
//	memory_delete       path                  destructive
//	memory_rename       old_path, new_path    destructive
//
// A call's arguments, with "command" added in front, are the tool input
// memtool exec would read, and go through the same strict parser and
// Memory.Run; so the answer is exec's, byte for byte: one text content
// (isError set when the command failed, with the same "Error: ..." text),
// or one image content for a view of an image. Arguments that are not an
// object, mistyped or duplicate parameters and the like get exec's error
// text too. One difference: a parameter the tool does not have, which
// exec ignores, is refused (as the tool's schema, additionalProperties
// false, says), so that a misnamed one cannot do something else than
// asked (memory_str_replace with new_text rather than new_str would
// delete old_str). ToolCall and ToolInput map between memory tool inputs and MCP
// calls; ResultOf reads an answer back into a memtool.Result.
//
// memory_create's description says what create does with the Memory's
// Options.Overwrite: refuse an existing file, or replace it (then the tool
// is marked destructive).
//
// A read-only server (Options.ReadOnly, or an HTTP identity that may not
// write) lists memory_view and memory_search alone: the other tools do
// not exist for its client, and calling one is a protocol error that
// changes nothing.
//
// # Guidance
//
// The Messages API tells the model how to use its memory; an MCP client
// does not. The server's instructions (Instructions) carry that protocol
// — look in /memories before starting, record progress and decisions as
// you go, keep the files organised — and the prompt memory_protocol
// carries the same text, with an optional task, for clients that show
// prompts rather than instructions.
//
// # Resources
//
// The memory's files are also MCP resources, for clients that let a user
// attach them: resources/list gives every file below /memories (in name
// order, a page of 100 at a time, hidden entries left out as view's
// listings leave them out, and only names the path gate accepts), and
// resources/read, through the template memory:///memories/{+path}, gives
// a file exactly as stored: UTF-8 text as text/plain, other bytes as a
// blob. A URI is memory:// and the file's path, percent-escaped
// (ResourceURI); it goes through the same path gate as a tool's path, so
// nothing outside /memories can be named. Reading is allowed to every
// identity, read-only ones included.
//
// # Transports
//
// Over stdio, run the server on NewIOTransport (memtool mcp does this: one
// process per client, several processes on one store are safe). The tool
// calls of one session run one at a time, in the order the client sent
// them, even when it sends the next before the answer to the last (a
// batch's calls, though, may run in any order).
//
// Both transports check each message before the MCP SDK reads it (see
// NewIOTransport): a key given twice or two keys that differ only by case
// (outside a tools/call's arguments, which the tool's parser checks), an
// id the answer could not carry, a batch giving one id to two requests,
// or data after the message is answered with a JSON-RPC error, Invalid
// Request or Parse error, and nothing in it runs.
//
// Over HTTP, NewHTTPHandler is the streamable HTTP transport in stateless
// mode: no session is kept or issued, so any process behind a load
// balancer answers any request and a restart loses nothing. Every request
// is checked for its Host (against DNS rebinding: on a loopback address
// only loopback names are accepted, elsewhere HTTPOptions.AllowedHosts)
// and its Origin (a browser page of another origin is refused unless
// listed), and then given its identity by an OpenFunc: the memory of its
// tenant and whether it may write. The function is yours — static API
// keys, a session, or OAuth.Open.
//
// # OAuth
//
// OAuth is an OAuth 2.1 resource server for the HTTP endpoint: bearer JWTs
// from one authorization server are verified against its published keys
// (signature with an asymmetric algorithm, issuer, audience = the
// endpoint's URL, expiry, not-before), the tenant is read from a configured
// claim, and the scopes memory:read and memory:write (configurable) grant
// view or everything. It serves the protected-resource metadata of RFC 9728
// that clients such as claude.ai and Claude Desktop connectors use to find
// the authorization server, and a 401 or 403 names it, with the error
// code of RFC 6750 (none without a token, invalid_token, or
// insufficient_scope with the scope that would do: see OpenFunc).
//
// See docs/mcp.md for client set-up.
package mcpserver
