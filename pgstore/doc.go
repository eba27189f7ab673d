// Package pgstore is a memtool.Store in a PostgreSQL database, through
// pgx/v5 and its pool: any number of memtool processes on any number of
// machines share one memory (and its replicas and backups). The URL in
// memtool is postgres://… or postgresql://…; a search_path parameter picks
// the schema. Give it one schema: the tables are looked up along the path,
// so with several (or PostgreSQL's default "$user", public) a store may
// find and use another schema's tables.
//
// # Schema
//
// Open creates and migrates the tables itself: memtool_schema_version
// records the version, and the migrations run under an advisory lock, so
// processes starting at once migrate once. With Options.Existing (how
// memtool opens a store to read it) Open creates no tables: a schema
// without them fails with ErrNoTables and is left as it was, so that a
// read neither makes a store nor needs the right to. Every file and directory is one
// row of memtool_entries, keyed by (tenant, parent directory, base name) in
// the "C" collation (byte order): listing a directory is one range of the
// primary key, so it costs what it lists, not the size of the tenant or the
// table, and a subtree is one range too.
//
// # Search
//
// The store is a memtool.Searcher: one statement asks the server for the
// files that hold a search's words (LIKE, or ILIKE when case is ignored,
// on encode(data, 'escape'), which never fails on bytes that are not
// UTF-8; ILIKE's terms are cut at the letter i, which a Turkish collation
// lowers to a dotless ı), and memtool.Search checks their lines, so its
// results are those of a scan. Migration 2 makes a pg_trgm GIN index on that expression,
// which the server keeps in the transaction of every write; where the
// extension cannot be installed it makes none and logs a warning on the
// server, and searches read the tenant's files on the server instead.
// HasSearchIndex tells which.
//
// The index has a cost on every write: the server extracts the trigrams
// of the whole file each time a row changes, however small the edit (the
// README's performance section has the figures). An operator who does
// not search may drop it (DROP INDEX memtool_entries_trgm): searches then
// scan the tenant's files on the server and find the same lines, and no
// later Open makes the index again (TestSearchWithoutIndex). CREATE INDEX
// with migration 2's statement brings it back.
//
// # Guarantees
//
//   - Every method is one transaction; a method that fails has changed
//     nothing. PostgreSQL commits durably (with its default
//     synchronous_commit) before the method returns.
//   - Writes of one tenant are serialised by a transaction-level advisory
//     lock on the tenant: Update reads the row FOR UPDATE and writes it back
//     under that lock, so no update is lost, and of racing creates, mkdirs
//     or renames onto one name exactly one wins (the primary key would
//     refuse a second row regardless). Different tenants write in parallel.
//     The lock's key is the tenant id alone: stores in different schemas of
//     one database share it, so a write there waits for another schema's
//     write to the same tenant id (contention, never a mixed-up write). A
//     key that named the schema would stop processes of this version and
//     the last from locking each other out during an upgrade, so it stays.
//     Transactions run at READ COMMITTED whatever the session's default
//     isolation level, so that a write reads what the lock's previous
//     holder committed, and a claim of the database's mode (see Tenants)
//     finds the one another process recorded at the same time
//     (TestIsolationLevel).
//   - Readers take no lock: Stat, ReadFile and ReadDir are one statement
//     each, outside a transaction (a statement sees one snapshot); a reader
//     sees a file's old or new content, never a mix.
//   - An Update whose function returns the old content writes nothing: its
//     transaction rolls back.
//   - Rename moves a directory with its whole subtree, RemoveAll removes a
//     subtree, each in one transaction.
//
// # Round trips
//
// Each method costs few exchanges with the server, once a connection has
// prepared its statements (pgx's statement cache: the first use of a
// statement on a connection costs one more): a read is one round trip; a
// write sends BEGIN, the tenant's lock and its first statement (which
// reads all that the write checks) together, then its changes with the
// COMMIT: two round trips (Update, WriteFile, Remove of a file, Rename of
// a file), so that the tenant's lock is held for one exchange with the
// server after it is granted. Should the answer to the second be lost with
// the connection, the write fails with an error that says the change may
// or may not have been made, and is not tried again; should the server
// refuse a change, the transaction is aborted, the COMMIT commits nothing
// and the write fails with the server's error. Mkdir of a directory that
// exists is one statement, without a transaction. A failed write costs a
// ROLLBACK too. Through memtool.Memory, str_replace and insert cost 2 (an
// Update, which reads what the edit checks), view of a file 1, of a
// directory 2 (ReadFile, which says it is one, then ReadDir) and one more
// for each subdirectory it lists (a view shows two levels), create at
// the root 2;
// TestRoundTrips counts them on the wire. A pooled connection is not
// pinged before use: one found dead is replaced and the method runs again
// (see below).
//
// # Timeouts, held locks, restarts, full disks
//
// What a caller sees, and the model through memtool.Memory:
//
//   - Every method, and Open, ends within Options.OpTimeout
//     (DefaultOpTimeout unless set), and at once when its context is
//     cancelled (with the context's error), whatever the server or the
//     network does. Connecting is bounded by Options.ConnectTimeout (or the
//     URL's connect_timeout). A server that stopped answering (stopped,
//     overloaded, cut off) ends a method with an error that says so: not
//     memtool.ErrBusy and not a cancellation, so the model reads an
//     internal error. No error shows the URL's password.
//   - A write waits for the tenant's write lock, a row, or a table another
//     session holds no longer than Options.LockTimeout (DefaultLockTimeout
//     unless set; the session's lock_timeout), and then fails with an error
//     wrapping memtool.ErrBusy, having changed nothing. Within one
//     process at most two writes of a tenant at a time hold a connection
//     (the others wait without one, leaving the pool to reads and other
//     tenants), and wait for that turn no longer than LockTimeout either. Reads wait so only
//     for a lock on the whole table (LOCK TABLE, some ALTER TABLE). Open
//     waits so for another process's migration, only when the schema is
//     not current.
//   - The store's sessions carry statement_timeout and
//     idle_in_transaction_session_timeout equal to OpTimeout: should a
//     memtool process freeze or lose its network in the middle of a write,
//     the server ends that transaction and its locks go to the others.
//     They and lock_timeout are start-up parameters of each connection,
//     which take precedence over those set for the role or the database
//     (ALTER ROLE or ALTER DATABASE … SET): behind a connection pooler,
//     they must reach the server. Durability is the server's
//     synchronous_commit, which the store leaves as it is: set off for the
//     role or the database, a write acknowledged may be lost in a crash.
//   - When PostgreSQL restarts, or ends the store's sessions, the pool's
//     connections are dead: the first method that meets one, if it had not
//     sent its commit yet, or the server ended the session before it ran
//     the commit (a session ended while its write was under way says so
//     before it reads the rest), drops them and runs once more on a new
//     connection, so it succeeds once the server is back. A write whose
//     commit got no answer is not run again: it fails with an error that
//     says the change may or may not have been made (it wraps
//     memtool.ErrOutcomeUnknown, and the model is told to look before
//     trying again). This is weaker than
//     memtool.Store's "an error means nothing changed", which no client of
//     a remote database can promise.
//   - A write refused for want of disk space (SQLSTATE 53100, disk_full)
//     fails with an error wrapping memtool.ErrNoSpace, and one refused
//     because the session takes no writes (25006, as a hot standby or
//     default_transaction_read_only gives) with memtool.ErrReadOnly; either
//     has changed nothing. Reads go on working in a read-only session, and
//     Open too once the schema is current (a database without it fails
//     Open with memtool.ErrReadOnly).
//
// # Tenants
//
// The store Open returns is the tenant-less one; Tenant(ctx, id) returns
// the store of one tenant, whose id is part of every key. The first change
// decides the database's mode for good (a row in memtool_meta; a read of
// an unused database decides nothing): a database changed without a
// tenant refuses Tenant, and a multi-tenant database refuses
// the tenant-less store (memtool.ErrTenancy).
package pgstore
