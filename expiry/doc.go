// Package expiry lets memories that nobody uses any more expire: a
// wrapper records when each file was last read or written, and Collect
// moves the files unused for a given time into a hidden trash, from which
// Restore brings them back until a grace period ends.
//
//	store := expiry.New(inner, nil) // use store for the memory tool
//	…
//	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour})
//	t, err := expiry.Restore(ctx, inner, "/memories/notes.md", time.Now())
//
// `memtool gc --unused-for 30d [--grace 7d] [--dry-run]` and `memtool
// restore PATH` (or `--list`) do the same from the command line.
//
// # Tracking
//
// The access times are memtool's own, not the file system's atime (which
// is often off, and which backups and scanners touch): the wrapper keeps
// them in an index, the file .memtool-expiry.json in the store itself, so
// every process using the store shares it. A read (view, and the read of an
// edit) or a write records the time; a listing does not, nor does a
// search (memtool.IsSearchRead: it reads every file of a memory without
// an index, and would keep them all from expiring); a rename records
// the moved files as used, and a removal forgets the removed files, so
// that a file written at one of their names later, whose own use could
// not be recorded, has no access rather than theirs. To keep reads cheap, an access is recorded only
// if this process recorded none for the file within Options.Resolution
// (default one hour), and in whole seconds, so a file may have been used
// up to Resolution and a second after its recorded access. A failure to
// record goes to Options.OnError and does not fail a read. It fails a
// write, an edit or a rename, changing nothing, where the index holds an
// earlier use of the name (a full disk may have room for a file and none
// for the index): Collect would take that use for the last one of what
// the change puts there, and expire it early. Elsewhere the change goes
// on: a file without a recorded use counts as used at the next Collect.
//
// The index is read and written whole, up to 64 MiB: some half a million
// files of 100-byte paths. An index past that, or one that does not
// parse, records nothing more (each use goes to OnError) and Collect
// fails, expiring nothing; ResetIndex (memtool gc --reset-index) removes
// such an index, and every file then counts as used at the next Collect.
// An index of a later format (written by a newer memtool) is treated the
// same way but never rewritten or reset: its times may mean other things,
// and this package would drop what it does not know; use the newer one.
//
// # Collecting
//
// Collect expires the regular files that were not used for UnusedFor,
// moving each to .memtool-expiry-trash/<time of the run>/<its path> (a
// later time if the store holds one; see below);
// directories stay. It counts the index's coarseness in: a file expires
// only once its recorded access is UnusedFor + Resolution + 1s old, so a
// file used less than UnusedFor ago never expires, and one unused for
// longer expires within Resolution + 1s of being due. UnusedFor may not be
// below Resolution (ErrBelowResolution): the index cannot tell such ages
// apart. CollectOptions.Resolution must be the largest Resolution of the
// wrappers writing to the store (both default to DefaultResolution).
//
// These promises hold for clocks that agree. The times are those of the
// clocks of the processes: one whose clock is behind by X records its
// uses X early (a recorded access only moves forward, so it never
// replaces a later use another process recorded), and a Collect whose
// clock is ahead by X expires files up to X early, and purges trash
// batches up to X early, for good. A Collect whose clock is behind
// records no time before the latest access in the index (a file it sees
// first, the name of its batch), nor names a batch before the newest one
// in the trash: its batch stays for Grace, and is the one Restore takes.
// A time recorded by a clock far ahead thus keeps those files, and the
// batches after it, until that time has passed. A time past the year 9999
// (a damaged index) names no batch, whose names have four-digit years; a
// batch at the last second of that year takes the files of later runs,
// but for one whose place in it is taken, which stays unexpired. Keep the clocks of the
// machines sharing a store synchronized, well within UnusedFor.
//
// A file written or read while Collect runs stays, with what was
// written: the wrapper records a write (or an edit, or a rename) before
// it makes it, and a read before it answers (it then looks whether the
// file is still there, and if Collect moved it meanwhile answers that
// there is none), and Collect reads the index again after its moves
// (also when it stops early, cancelled or failing) and puts back every
// file used since it first read it.
//
// A file with no recorded access (written before tracking began, or
// around the wrapper) counts as used at the first Collect that sees it.
// So does one whose recorded access is no use memtool can have recorded,
// one before 2000 or past the year 9999 (a damaged index, an older
// build's bug): it is not expired for it, and Collect records it anew.
// Trash batches older than Grace (default 7 days) are removed for good,
// first, so that a Collect on a full disk frees their space whatever else
// it cannot do there.
// With DryRun, Collect reports the same and changes nothing. The index
// and the trash start with ".memtool", which the path gate refuses, so the
// model cannot read, list, change or restore them; the wrapper leaves them
// out of listings. IndexName and TrashName name them, for tools that copy
// a store whole. Collect leaves every root entry starting with
// ".memtool" alone (package history's versions, a policy record): none is
// a memory, and some stores list them.
//
// Restore moves the most recently expired file at a path back, unless
// something is there again (an error wrapping memtool.ErrExist), and
// records it as used.
//
// Collect and Restore take the inner store (not the wrapper) and use its
// Renamer when it has one, else copy and remove; they are meant to run
// from one process at a time (a cron job, `memtool gc`), while the memory
// tool keeps working.
//
// # Capabilities and cost
//
// The store New returns is a memtool.Wrapper: it forwards the inner
// store's optional capabilities (Renamer, RemoveAller, Tenanted,
// TenantLister), answering errors.ErrUnsupported for those the inner store
// lacks, and Tenant returns the inner tenant's store under the same policy,
// whose index and trash are inside that tenant. Within the resolution a read costs
// one map lookup; recording an access is one Update of the index (on the
// file store an fsynced write), and for a read a look at the file after
// it (a read of none of its bytes), at most once an hour per file and
// process;
// a removal is one Update of the index too, which writes it only if it
// held an access of what was removed; so is a delete under package
// history over the wrapper (a rename into history's own files), whose
// moves of the deleted files into their versions leave the index alone.
// To compare a view of a 4 KiB file through Memory on memstore with and
// without the wrapper:
//
//	go test -run '^$' -bench . ./expiry
package expiry
