// Package filestore is a memtool.Store in a directory of the local file
// system: the embedded default, one file per memory.
//
// # Containment
//
// Every access goes through an os.Root opened on the directory, or through
// a directory descriptor that os.Root opened, with a single-component name.
// Symbolic links inside the directory are followed when they stay inside;
// links that lead out, loop or are absolute are refused (memtool.ErrEscapes).
// As a link makes two names lead to one entry, the Store is a
// memtool.Resolver: a turn of tool calls orders calls through a link after
// those on where it leads (ResolveName). A replace or an update of a link
// (WriteFile with Replace, Update) writes the file it leads to, resolved
// under the write lock, and the link stays a link, so both names keep
// meaning one file; a link to one of the store's own names (below) is not
// written through (memtool.ErrEscapes). A create (CreateOnly) of a link's
// name fails with memtool.ErrExist, as it does on anything there, and
// Rename, Remove and RemoveAll of a link move or remove the link, never
// what it leads to (TestEditThroughFileLink, TestRenameAndRemoveOfFileLink).
// FIFOs, sockets, devices and regular files with more than one hard link are
// never opened for reading and are reported as memtool.ErrIrregular. Where
// a directory is expected (a file's parent, the tenants' directory), it is
// opened with O_DIRECTORY, which refuses anything else without opening it,
// so a FIFO or a device there fails the call at once (memtool.ErrNotDir)
// instead of blocking it, and the write lock with it (TestFIFOInThePath,
// TestNoOpenOfFIFOOrDevice).
//
// # Durability
//
// A file write (WriteFile, Update) first writes its content to a file
// without a name (O_TMPFILE) on the store's file system and fsyncs it,
// before it takes the write lock. Under the lock it links that file into
// the target's directory: a create straight to its name (linkat, which
// never replaces, so two creates of one name never both win), a replace
// to a temp name that is then renamed over the target. After releasing the
// lock it waits for an fsync of the directory that started after its
// rename; the writers of one process that renamed into one directory share
// that fsync (group commit). Only then does the method return. Where
// O_TMPFILE is missing (other systems than Linux, file systems without it)
// or the link fails (another file system mounted below the store's
// directory), the temp file is written and fsynced under the lock instead,
// and a create renames it with renameat2 RENAME_NOREPLACE.
//
// A directory change (Mkdir, Remove, RemoveAll, Rename) and its directory
// fsyncs happen under the lock. A directory removal first renames the
// directory away, atomically, then deletes it; where the file system will
// not rename it (a directory of an overlayfs's lower layer, such as a
// container's image, without redirect_dir), it deletes it where it is, so
// that a crash part way leaves the rest (TestRemoveAllOnOverlayLowerLayer),
// and a Rename it will not make fails with an error wrapping
// errors.ErrUnsupported, having changed nothing, so that memtool.Memory
// moves it by copying (TestRenameOnOverlayLowerLayer). Leftover temp files and
// removed directories from a crashed process are swept when the store is
// next opened, and so is the rest of a removed directory that a removal
// could not delete (the Store closed under it, say), which it logs (a writer that may leave a named file behind marks the lock
// file while it holds the lock; a mark found while no writer holds the
// lock triggers the sweep, and a writer of a process already running that
// finds it leaves it there). A staged file has no name: nothing can sweep
// it while its writer lives, and the kernel frees it when the writer dies,
// so it leaves nothing to sweep. Files are created 0600 and directories
// 0700.
//
// # Concurrency
//
// Mutations hold an exclusive flock on the store's directory (and take
// turns within the process), so several processes sharing one directory
// never lose an update. They also flock the lock file .memtool.lock, which
// is what earlier versions of this package locked alone, so that a process
// still running one of those is kept out too. A file write holds the lock
// only to check and rename, not while it writes or fsyncs, so writes to
// different files, in one process or several, overlap their I/O. Nor does
// it hold the lock while the kernel frees the blocks of the file that a
// replace or a removal takes away, which on ext4 is most of a rename's
// cost (about 150 of 170 µs): before the rename or the unlink it opens
// that file by path only (O_PATH, which reads nothing and cannot block),
// so the rename only drops its name, and it closes that descriptor after
// the lock is released, which frees the blocks. A replace leaves the
// close to a goroutine of the package's own and returns without waiting
// for it (a store's Close waits for its own), so the old file's space
// comes back a moment after the write returns; a removal closes it itself,
// so the space is free when Remove returns (TestPinsReleased,
// TestPinHoldsTheReplacedFile; BenchmarkPinnedReplace measures the gain).
//
// Update reads the file and calls fn holding the lock. If fn returns the
// bytes it was given (compared with what was read, whatever fn did to
// them), Update writes nothing: no file, no fsync. Otherwise it stages the
// new content with the lock released, takes the lock again and renames
// only if the file still holds exactly what fn was given; if another
// writer changed it meanwhile, Update runs again (fn is called again, on
// the new content) holding the lock from the read to the rename. So two
// writers never lose each other's update.
//
// Reads take no lock: they see a file's old or new content, never a mix.
// A listing (ReadDir, ListDir) is of one moment: its names are read in one
// getdents call, and read again if that call came short (a signal cuts
// one short) or the directory changed meanwhile; a
// directory changed all the time is read, after a few tries, holding the
// write lock (so such a listing can wait for it, and fail with
// memtool.ErrBusy). ListNames gives the names as the directory holds them,
// and so does ListDir once a read finds more than its max: such a
// directory is read once, in whatever parts the reads come.
// What a reader may observe before a write's method returns: the new
// content (or new entry) from the moment of the rename (or link), which
// comes before the fsync of the directory completes. Until that fsync
// completes, a crash of the machine (not of the process: the rename is in
// the kernel) may undo the change; the write has not returned then.
// Writers read too. Within one process, a write that saw a change of
// another write of the same Store whose directory fsync is under way (an
// Update reading it, then writing nothing or refused by fn; a create,
// mkdir or rename finding the name taken; any write that fails, say on a
// file too large to update, a file where a directory should be, a
// directory that file keeps from being removed) returns only once that
// fsync is done, so no answer rests on a change a crash could undo. An
// Update of a link reads and writes the file the link leads to, in its
// own directory, so the fsync of that directory covers what it read. Across
// processes, an Update that builds on such a change and writes is durable
// with it (its own fsync of the same directory covers the earlier rename),
// but one that writes nothing or fails, and a create, mkdir or rename
// finding the name taken, may answer before that change is durable.
//
// If the fsync of a directory fails (EIO) after a change was made in it,
// the change is seen but a crash may undo it: the method's error wraps
// memtool.ErrOutcomeUnknown, as the Store contract asks of a change that
// may or may not have been made, and never says that nothing changed.
//
// Open of a directory that exists, and every read, leave it as they found
// it, byte for byte and with the same modification times: Open creates no
// lock file (the first writer does) and writes no mark, a listing that
// takes the lock makes none either, and opening a tenant that exists
// creates nothing. So a read-only command (memtool view) may be pointed
// at any directory (TestReadsWriteNothing). The one exception is recovery: an Open that
// finds a dead writer's mark sweeps its debris and clears the mark, as
// above. Reading may move the access times, as any reader does.
//
// Names starting with ".memtool" are the store's own; the path gate refuses
// them and ReadDir never returns them.
//
// # Tenants
//
// Store implements memtool.Tenanted and memtool.TenantLister, with the
// layout the memtool CLI has always used: tenant ID's memory is a store of
// its own (own root, own lock, own crash recovery) in the directory
// .memtool-tenants/ID. Tenant opens it through the parent's root, once per
// id and parent Store. The parent owns it: the parent's Close closes it,
// its own Close does nothing. A tenant's store has no tenants of its own.
//
// A directory is single-tenant or multi-tenant for good, across processes:
//
//   - It holds a tenant-less memory when it holds any entry but the store's
//     own files (.memtool.lock, temp files, trash, .memtool-tenants). What a
//     tenant-less memory's policies keep beside it (.memtool-history,
//     .memtool-expiry*) counts as that memory's. Tenant then fails with an
//     error wrapping memtool.ErrTenancy, and so does Tenants unless
//     .memtool-tenants exists too.
//   - It is multi-tenant once .memtool-tenants exists. Every method of
//     memtool.Store on the tenant-less view (the Store that Open returned)
//     then fails with an error wrapping memtool.ErrTenancy, reads included
//     (a call that is invalid anyway, such as WriteFile of "", may fail
//     with its own error first).
//   - The first Tenant call on a directory (its claim) creates
//     .memtool-tenants holding the directory's write lock, after checking
//     under it that the directory holds no memory; every tenant-less write
//     checks for .memtool-tenants under the same lock. So of a tenant-less
//     write and a claim, in whatever processes, exactly one succeeds. Not
//     covered: a tenant-less read racing a claim can still succeed (it sees
//     a memory with nothing in it), and a process running a version that
//     decided tenancy without the lock can still mix the two. A directory
//     where both were mixed is refused by the tenant-less view and by Tenant
//     alike; Tenants still lists its tenants.
//   - Tenants lists the directories in .memtool-tenants whose names are
//     valid tenant ids, in byte order, including tenants named but never
//     written. A .memtool-tenants that is a link out of the store is
//     refused like any other. Tenant refuses (memtool.ErrEscapes) a
//     .memtool-tenants or a tenant's directory that is a link even inside
//     the store: alice -> bob, made by hand, would give alice bob's memory
//     (TestTenantDirLinkedToAnother).
//
// # When the host misbehaves
//
// Opening fails only if the directory cannot be created or opened. In
// particular:
//
//   - Debris: leftovers of a crashed writer that cannot be removed (owned by
//     another user, immutable, in a directory without write permission) are
//     logged to Options.Logger and left where they are, hidden from the
//     model; the crash mark is cleared anyway, so later opens do not walk
//     the tree again. Sweep retries and reports what it could not remove.
//   - A full disk (ENOSPC, EDQUOT): a write that needs space fails with an
//     error wrapping memtool.ErrNoSpace and leaves no temp file behind.
//     Delete and rename need none and work: the lock file's mark is
//     rewritten over bytes the file already has (the first writer that
//     marks it gives it those bytes), a writer that cannot mark at all
//     goes on unmarked, and a removal renames its target away before deleting it.
//     But a rename puts the new name into its directory before the old
//     one leaves: where that directory has no room left for it (ext4, a
//     full directory block), it needs a new block, so a rename, and the
//     removal of a directory (renamed to a longer trash name first), can
//     fail with memtool.ErrNoSpace and change nothing; the removal of a
//     file never renames (TestFullExt4DirectoryBlock). On a copy-on-write
//     file system (btrfs, ZFS) even an overwrite, a rename or an unlink
//     may need space, so there a full disk can refuse them too, with
//     memtool.ErrNoSpace.
//   - A read-only file system (EROFS), or a directory this process may not
//     write (EACCES, EPERM): the store opens without creating its lock
//     file, reads work, and every write fails with an error wrapping
//     memtool.ErrReadOnly and changes nothing. A crash mark found then is
//     logged; its debris is swept by the first Open that can write. Once
//     the file system is writable again the same Store writes.
//   - A held lock: a write waits for another writer at most
//     Options.BusyTimeout (DefaultBusyTimeout when zero), polling without
//     blocking (another process's lock: about every 100 µs at first,
//     about once a millisecond later on), then fails with an error
//     wrapping memtool.ErrBusy; a cancelled context ends the wait at once
//     with the context's error.
//     Open never waits: if the lock is held, the mark in the lock file is
//     that writer's, and no sweep is due.
//   - A tampered lock file: deleting or replacing .memtool.lock does not
//     let two writers in, since the lock that holds is the directory's; the
//     next writer creates the file again. If it cannot be opened at all
//     (say a directory now has its name), or what opens is not a regular
//     file of one link (a link, even to a memory inside the store, is not
//     followed; a second hard link of a memory, a FIFO), writers log that
//     and go on without a crash mark, and never write a mark into it.
//   - Unreadable entries: a directory this process may not both read and
//     search (mode 000, or 0400) is reported by Stat and ReadDir as
//     irregular, so listings leave it out (the model's view of it says it
//     is an unsupported file type) instead of failing as a whole. An entry
//     ReadDir sees but cannot examine (EACCES in a directory that can be
//     read but not searched, EIO) is listed as irregular too. A file that
//     cannot be read, and an I/O error (EIO) anywhere else, fail that call
//     with an error of no memtool class, which memtool.Memory logs and
//     reports to the model as an internal error.
//
// Errors of the Store's methods carry store-relative names, never the
// directory's host path; memtool.Memory shows the model only its own text
// for them.
package filestore
