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
// # Search
//
// The store is a memtool.Searcher: an FTS5 trigram index of the files'
// text (memtool_fts, contentless, under the ids of memtool_fts_id) names
// the files that may hold a search's words, and memtool.Search checks
// their lines, so its results are those of a scan. A write does not
// index its file at once: it adds it to a pending list
// (memtool_fts_pending), and the write that brings 64 files or 1 MB of
// text pending folds them all into the FTS5 index in one step. A search
// reads the files the index names and every pending file. Triggers on
// memtool_entries keep the list in the transaction of every write, so a
// write and its index entry commit or roll back together. A write that
// leaves a file's text unchanged touches no index; a file holding a NUL
// byte (which search skips) is not indexed. A file of schema version 1
// or 2 gets the index when it is first opened, under the write lock,
// once however many processes open it; a read-only one is opened without
// it, and searched by a scan.
//
// # Guarantees
//
//   - Every method is one transaction or one statement. A read sees a WAL
//     snapshot: a file's old or new content, never a mix.
//   - Writes run in BEGIN IMMEDIATE transactions, which take the file's
//     write lock before they read, so that read-modify-write (Update) never
//     loses an update, and of concurrent creates, mkdirs or renames onto one
//     name exactly one wins, across goroutines and processes. A writer
//     waits for the lock while another holds it, up to the busy timeout
//     (below); the writes of one store take the lock in the order they
//     came (TestWritesTakeTurnsInOrder), those of other processes or
//     stores on the same file when they find it free.
//   - A change is durable on disk, through a power loss, before the
//     method returns: the store fsyncs the WAL after each commit. The
//     connections run journal_mode=WAL with synchronous=NORMAL, which
//     commits without an fsync (SQLite still fsyncs at checkpoints), and
//     the store makes the fsync itself once the file's write lock is
//     released, so that the writes of other goroutines and processes
//     overlap theirs, and one fsync serves every commit made before it
//     (group commit). The first fsync of a new WAL file syncs its directory
//     too. Why that is as durable as synchronous=FULL is in walsync.go.
//   - What may be seen before a write returns: its commit is visible to
//     other connections and processes as soon as it is made, before the
//     fsync that makes it durable; if the machine loses power then, the
//     write was never acknowledged and the state before it is what
//     remains. A write of the same store that commits nothing (a create
//     that finds the name taken, a Mkdir too when its read outside the
//     write lock finds it, an edit that changes nothing) answers only once
//     the commits it may have seen are durable.
//   - A failed fsync (EIO) fails the writes it was to make durable with
//     memtool.ErrOutcomeUnknown: they were made, and may not survive a
//     power loss. It is final for the store: a later fsync could succeed
//     without writing what the failed one lost (Linux reports a failed
//     writeback once), and recovery of the WAL after a power loss drops
//     every commit that follows a lost one, so no later write can be
//     promised durable. A write that committed meanwhile fails with
//     memtool.ErrOutcomeUnknown too, and every later write of the store
//     is refused with an error that says to open the store again, having
//     changed nothing (walsync.go). So is a write whose WAL file is
//     missing while the store is open (deleted by another program).
//   - A path whose last component (or any directory on it) is a symbolic
//     link: SQLite opens the file the link leads to and keeps its -wal and
//     -shm files beside that file, and so does the store, which resolves
//     the path when it opens. Should a link on the path lead elsewhere
//     later, the store's writes fail as for a replaced file (below): the
//     store stays on the file it opened, which holds every write it
//     acknowledged.
//   - Reads are one statement each (a listing reads the directory's own
//     row with its entries); an Update whose function returns the old
//     content writes nothing: its transaction rolls back.
//   - Rename moves a directory with its whole subtree in one transaction;
//     RemoveAll removes a subtree in one transaction.
//   - Each connection parses a query once: the store keeps a prepared
//     statement of each (stmts.go). A read prepares what it runs; a write,
//     which holds the one write connection, runs a new query unprepared and
//     the next write prepares it before taking the connection, waiting for
//     it no longer than its own busy timeout. So a one-shot command
//     prepares nothing it does not run (on a new file, the statement of
//     the tenancy claim its first change makes in a write of its own). Reads that run at once each hold
//     a read connection; up to 16 stay open between reads (each closed
//     after a minute unused), so that many concurrent readers do not open
//     and close connections.
//   - With Options.Existing (how memtool opens a store to read it), Open
//     writes nothing to a file that is not a memtool database yet: a
//     missing file is not made, and an empty file or another program's
//     database fails with ErrNoTables, its bytes and journal mode as they
//     were and, for a WAL database, no -wal or -shm file left beside it
//     (TestExistingWritesNothing, TestExistingLeavesWALDatabase). A file of schema version 1 or 2
//     still gets its search index (below).
//
// # Held locks, full disks, read-only files
//
// What a caller sees, and the model through memtool.Memory:
//
//   - A write waits for the file's write lock, held by another write of
//     this store, another connection or another process (a sqlite3 shell
//     left in BEGIN IMMEDIATE), no longer than Options.BusyTimeout
//     (DefaultBusyTimeout unless set) in all. Past it the method fails with
//     an error wrapping memtool.ErrBusy and has changed nothing. A
//     cancelled context ends the wait at once, with the context's error.
//     The wait for another connection or process is a loop of tries with
//     short pauses, not SQLite's busy handler, whose sleeps (1, 2, 5,
//     10... ms) are longer than a write holds the lock.
//   - Readers do not wait for writers (WAL). Opening an existing file
//     takes no write lock, so a store opens and reads while another process
//     holds the lock. Only a connection in SQLite's exclusive locking mode
//     shuts readers out: then Open fails with memtool.ErrBusy after the
//     busy timeout.
//   - A write that finds the disk full (SQLITE_FULL) fails with an error
//     wrapping memtool.ErrNoSpace and has changed nothing. A delete needs space in the write-ahead log too,
//     so on a full disk it may fail the same way; once space is freed the
//     store writes again.
//   - A database file that exists but cannot be written (its permissions,
//     an immutable file, a read-only file system) is opened read-only: reads
//     work, and every write fails with an error wrapping
//     memtool.ErrReadOnly. SQLite reads a WAL database on a read-only file
//     system, or in a directory that takes no new files, only while its
//     -wal and -shm files exist (another process has it open); otherwise
//     Open or reads fail with memtool.ErrReadOnly too. A new
//     file in a read-only directory fails Open with memtool.ErrReadOnly.
//   - A database file deleted or replaced while a store has it open (or a
//     symbolic link on its path changed to lead elsewhere): the
//     store's writes fail, as they would go to the file it has open, which
//     no later store at the path reads; its reads see that file, or fail
//     where they need a new connection (which would read the other file).
//     Open the path again. A write that commits while the file is being
//     deleted goes with it.
//   - Weaker: a file that becomes unwritable while the store has it open,
//     and an exceeded disk quota, reach SQLite as I/O errors: the method
//     fails with that error, which the model sees as an internal error.
//
// # Tenants
//
// The store Open returns is the tenant-less one; Tenant(ctx, id) returns
// the store of one tenant, whose id is part of every key. The first change
// decides the file's mode for good (a read of an unused file decides
// nothing): a file changed without a tenant refuses Tenant, and a multi-tenant file refuses the tenant-less store
// (memtool.ErrTenancy).
package sqlitestore
