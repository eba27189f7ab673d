// Package audit wraps a memtool.Store and writes one JSON line per store
// operation to an io.Writer: what was done, to which path, with what
// outcome, how many bytes, how long it took. It never writes file
// contents, nor the text of an error (which may quote them). A path is
// written with every secret that package secrets finds in it replaced by
// "[REDACTED kind]", as that policy's refusal shows it to the model (the
// model chose the path: a token in a name the secrets policy refused, or in
// the path of a read, stays out of the log; so does a secret that cutting
// the first one out uncovers, and a path whose redaction does not settle
// is written as "[REDACTED path]").
//
//	f, _ := audit.OpenLog("memory-audit.jsonl")
//	store := audit.New(inner, f, &audit.Options{Tenant: "alice"})
//
// A line looks like
//
//	{"time":"2026-11-30T04:11:11.123456Z","tenant":"alice","op":"update","path":"/memories/notes.md","outcome":"ok","bytes":1832,"duration_us":41}
//
// (see Entry and Outcome). A command of the memory tool is one or a few
// operations: create logs its mkdirs and the create (an update, when
// memtool.Options.Overwrite lets it replace a file), str_replace and insert
// an update (outcome "edit_failed" when old_str was not found and the like),
// view a read or the lists of a directory listing, delete a remove or a
// remove_all. Stat is left out unless Options.Stat is set.
//
// Put audit outside the other wrappers to log what they refused (outcome
// "refused"), or inside them to log only what reaches the storage.
//
// Each line is written with one Write call under a lock, so lines from
// concurrent operations never mix. A failed Write is passed to
// Options.OnError and does not fail the operation, which has happened by
// then. A Write that failed may have written part of its line (a full
// disk): the next line starts with a newline, so it stands on a line of
// its own, and Read skips the cut-off part, also where another writer of
// the same log (another process, or another tenant's store of memtool
// serve, which opens the log for each) put its next line right after it.
// Lines are written, not fsynced: a line outlives a crash of the process
// that wrote it, but a power loss can take the last lines of changes that
// were made durable, and can leave zero bytes where they were (a file
// system that made the log's new size durable before its data), which
// Read skips, however many (TestReadSkipsZerosOfAPowerLoss).
//
// # Reading
//
// Read parses a log and selects entries with a Filter (tenant, operation,
// path and everything below it, outcome, time range); `memtool log` does the
// same from the command line.
//
// # Capabilities and cost
//
// The store New returns is a memtool.Wrapper: it forwards the inner
// store's optional capabilities (Renamer, RemoveAller, Tenanted,
// TenantLister), answering errors.ErrUnsupported for those the inner store
// lacks, and Tenant returns the inner tenant's store under the same policy,
// logging with that tenant's id to the same writer. Rename and RemoveAll
// are logged as "rename" and "remove_all" (not when unsupported: the
// fallback's operations are logged instead). Each logged operation costs a
// scan of its path for secrets, one JSON encoding of its entry and one
// write to the log. To measure a str_replace in a 4 KiB file
// through Memory on memstore, logging to io.Discard:
//
//	go test -run '^$' -bench . ./audit
package audit
