// Package sqlitestore is a memtool.Store in one SQLite database file,
// through the pure-Go driver modernc.org/sqlite (no cgo). Several
// processes may share the file; the URL in memtool is sqlite:///abs/path.db.
//
// # Layout
//
// Every file and directory is one row of memtool_entries, keyed by
// (tenant, parent directory, base name). Listing a directory is one range
// of that key, so it costs what it lists, whatever the size of the tenant
// or the file. The root of a memory is implicit. memtool_meta holds the
// schema version and the tenancy mode.
//
// # Guarantees
//
//   - Every method is one transaction. Reads run in deferred transactions
//     and see a WAL snapshot: a file's old or new content, never a mix.
//   - Writes run in BEGIN IMMEDIATE transactions, which take the file's
//     write lock before they read, so that read-modify-write (Update) never
//     loses an update, and of concurrent creates, mkdirs or renames onto one
//     name exactly one wins, across goroutines and processes. A writer
//     waits for another process's write (busy_timeout, then retries until
//     its context ends).
//   - journal_mode=WAL with synchronous=FULL: a change is durable on disk
//     before the method returns.
//   - Rename moves a directory with its whole subtree in one transaction;
//     RemoveAll removes a subtree in one transaction.
//
// # Tenants
//
// The store Open returns is the tenant-less one; Tenant(ctx, id) returns
// the store of one tenant, whose id is part of every key. The first use
// decides the file's mode for good: a file used without a tenant refuses
// Tenant, and a multi-tenant file refuses the tenant-less store
// (memtool.ErrTenancy).
package sqlitestore
