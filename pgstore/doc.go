// Package pgstore is a memtool.Store in a PostgreSQL database, through
// pgx/v5 and its pool: any number of memtool processes on any number of
// machines share one memory (and its replicas and backups). The URL in
// memtool is postgres://… or postgresql://…; a search_path parameter picks
// the schema.
//
// # Schema
//
// Open creates and migrates the tables itself: memtool_schema_version
// records the version, and the migrations run under an advisory lock, so
// processes starting at once migrate once. Every file and directory is one
// row of memtool_entries, keyed by (tenant, parent directory, base name) in
// the "C" collation (byte order): listing a directory is one range of the
// primary key, so it costs what it lists, not the size of the tenant or the
// table, and a subtree is one range too.
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
//   - Readers take no lock: Stat and ReadFile are one statement, ReadDir one
//     REPEATABLE READ snapshot; a reader sees a file's old or new content,
//     never a mix.
//   - Rename moves a directory with its whole subtree, RemoveAll removes a
//     subtree, each in one transaction.
//
// # Tenants
//
// The store Open returns is the tenant-less one; Tenant(ctx, id) returns
// the store of one tenant, whose id is part of every key. The first use
// decides the database's mode for good (a row in memtool_meta): a database
// used without a tenant refuses Tenant, and a multi-tenant database refuses
// the tenant-less store (memtool.ErrTenancy).
package pgstore
