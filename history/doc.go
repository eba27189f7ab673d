// Package history keeps the earlier versions of memory files, so that a
// person can see what the agent changed and undo it.
//
//	store := history.New(inner, &history.Options{MaxVersions: 20, MaxAge: 30 * 24 * time.Hour, MaxBytes: 64 << 20})
//	…
//	vs, _ := history.Versions(ctx, inner, "/memories/notes.md")
//	old, _ := history.Read(ctx, inner, "/memories/notes.md", vs[0].N)
//	fmt.Print(history.Diff(string(old), current, "before", "now"))
//	err := history.Revert(ctx, store, inner, "/memories/notes.md", vs[0].N)
//
// From the command line: `memtool history PATH`, `memtool diff PATH
// [--from N] [--to N|current]`, `memtool revert PATH --to N`.
//
// # What is kept
//
// Before a file's content is replaced (an edit, a create with overwrite) or
// the file is deleted (also inside a deleted directory), the wrapper
// stores its content as a new numbered version of its path. Creating a
// new file and renaming keep nothing (no content is lost; a renamed file's
// versions stay under its old path), nor does a write or edit that leaves
// the content as it was (such as a revert to the current content), nor
// a change of an entry whose name starts with ".memtool" (package
// expiry's access index and trash, with expiry over the wrapper): the
// path gate refuses those to the model, Versions cannot name them, and
// their versions would push the memory's own out of MaxBytes. A failed
// operation keeps nothing,
// unless the inner store answered an error for a change it may have made
// (an fsync that failed after a rename, a commit whose answer the network
// lost) and the file no longer holds what was saved: that version stays. Per
// path, at most MaxVersions versions are kept (default 20) and none older
// than MaxAge (default 30 days); older ones are dropped after each change
// of that path, so the versions of a file that is not changed again (a
// deleted one) stay, past MaxAge, until it is or until PruneAged (which
// memtool gc runs) drops them; and each path that ever
// had a version keeps its counter (a few bytes), so that no number is
// handed out twice.
// A revert replaces the current content like any write, so it is undone
// the same way.
//
// The versions live in the inner store under .memtool-history/ (a
// directory per path, named by a hash of it), which the path gate refuses
// to the model and the wrapper leaves out of listings: the model can
// neither read the history nor rewrite it.
//
// # The bound on all versions
//
// Versions are kept below any quota over the wrapper (package limits
// counts only what the model sees), so MaxVersions and MaxAge alone
// would let a model fill the disk: edit a file and delete it, again and
// again under new names, each step within every limit. MaxBytes bounds
// the bytes of the versions of all the store's files together (of a
// tenant's, in a tenant's store; default DefaultMaxBytes, 64 MiB): a
// change whose version takes them past it drops the oldest versions, of
// any file, by the time they were kept, until they hold at most nine
// tenths of MaxBytes, so that the next changes need not count again. The
// version the change kept, and every one kept at the same time or later,
// stay (a single version larger than MaxBytes stays until a newer one is
// kept); live files are never touched, and no change is refused or
// undone for the bound. A version dropped is gone like one past
// MaxVersions: listing leaves it out, and reading, diffing or reverting
// to it fails with ErrNoVersion, also when it was dropped after it was
// listed. Not counted: the path and counter of each path (see above),
// and deletes waiting in the trash.
//
// The store keeps a usage counter beside the versions (a directory
// "usage" under DirName), so that a change need not list every path's
// versions: each version kept adds its size once it is written (a version
// smaller than a 256th of MaxBytes is added as that 256th, with the
// probability of their sizes' ratio, so that the counter is written about
// once for each 256th of new versions; its expected growth is still their
// bytes, and near the bound it is off by about a sixteenth of MaxBytes),
// and a change that finds the counter past MaxBytes lists them all, drops what
// it must, and sets the counter to what it found plus what other
// processes added meanwhile. A version dropped (by MaxVersions, MaxAge
// or a failed change) is not taken off the counter; the count that the
// counter's growth brings on does. So the counter never says less than
// the versions hold, but for the sampling of small versions, and for one
// version for each process that died
// between writing a version and counting it, or whose update of the
// counter failed (OnError hears of it): the versions may pass MaxBytes by
// that much until the counter's growth brings on the next count. While
// changes are under way, the versions may also pass MaxBytes by theirs,
// one for each process, until each has counted. Processes changing files
// at once each count and drop the oldest; none drops a version kept after
// its own, and each drop removes one whole version, so a process that
// dies part-way leaves whole versions and a counter that says more than
// they hold, which the next count sets right. The order is that of the
// processes' clocks: a process whose clock runs behind keeps versions
// that the others take for older. A process with MaxBytes negative counts
// nothing, nor does a memtool from before the bound: their versions count
// from the next count on. A counter that does not read as one is counted
// again, and so is one that cannot be read at all (damaged past the size
// of a counter, or sealed by an encrypting store below under a key the
// process lacks: OnError hears of it), which the count then replaces;
// during a key rotation, a process without the new key thus counts at
// each change until it has the key.
//
// # Consistency
//
// Every content that a change replaces or deletes is kept (within
// MaxVersions, MaxAge and MaxBytes), also when other processes, each
// with its own wrapper, change the same file at the same time:
//
//   - An edit, or a write over a file, first saves the content it read as
//     a version, then changes the file with an update conditional on that
//     content. If another process changed the file meanwhile, the version
//     is dropped and the change starts over; after 100 attempts in a row
//     it fails with memtool.ErrBusy, having changed nothing. A write where
//     no file is creates only, so a file that another process creates
//     meanwhile is kept before it is replaced.
//   - A delete moves the file, or the directory, into the wrapper's trash
//     in one step with the inner store's atomic rename (memtool.Renamer):
//     the move is the save, so the content there at that instant is kept,
//     whoever wrote it. Its files then move from the trash into their
//     versions' places. If the process dies in between, the next delete,
//     edit or write over a file through any wrapper on the store finishes
//     the job; until then those versions are missing from listings, not
//     lost. What a failure leaves
//     in the trash with nothing of a delete in it (a lost answer to the
//     creation of the trash's directory for a delete, a failed removal
//     of it once its files became versions) is removed by a delete or an
//     edit an hour later or more; a delete still in progress that another
//     process's clock takes for so old starts over and loses nothing.
//
// Version numbers come from a counter per path, advanced with an atomic
// update: two processes never get the same number, and a number is never
// handed out twice, also after its version was pruned. A counter that
// does not hold a number, or holds the largest there is (damaged), fails
// the path's changes with an error naming it, changing nothing, rather
// than keep a version under a number Versions cannot list. The versions of
// the changes that took effect are numbered in the order they took effect
// (a delete numbers its versions after the move, and a change keeping a
// version first numbers those of the deletes waiting in the trash); a
// change that failed, or lost a race, leaves a gap. One exception: an edit that finds the file
// changed and changed back to the content it saved keeps the number it
// took first, so pruning treats that version as older than it is (the
// same content is also kept under the higher number of the change that
// replaced it first). Pruning keeps the newest MaxVersions by number,
// which no other process's pruning can undercut, since numbers only grow.
// Also weaker: a version is written before its change takes effect, so
// a prune in another process at that moment counts it; if the change then
// fails for good, the file keeps one version fewer than MaxVersions until
// its next change.
//
// A process that dies between saving a version and changing the file
// leaves a version equal to the current content, never a change without
// its version.
//
// Removing a directory (an empty one: Remove) keeps nothing. A directory
// that another process replaces with a file between the wrapper's check
// and the removal is removed unkept; this is the one race of Remove the
// wrapper does not close.
//
// # Without an atomic rename
//
// Over a store without memtool.Renamer (memtool.Has says which), a
// delete takes two steps: it saves the content as a version and turns the
// file into a tombstone, in one update conditional on the content saved,
// and then removes the tombstone. Every wrapper treats a tombstone as
// gone (Stat, ReadFile, ReadDir and Update do not see it), and an edit
// racing the delete therefore either took effect before it, and was kept,
// or fails as if the file were gone. What is weaker:
//
//   - A write (a create) where a tombstone is fails with memtool.ErrBusy
//     while the delete is in progress. A tombstone left by a process that
//     died between the steps blocks writes there for ten minutes (and for
//     as long as its clock ran fast, up to a day more: see below), and is
//     then replaced by the next write; until a write replaces it, a
//     directory cannot be created at that name, nor its parent removed
//     entry by entry (with memtool.RemoveAller it can).
//   - Ten minutes are measured from the deleting process's clock to the
//     writing one's: a writer whose clock runs ahead takes a tombstone
//     for stale sooner. One dated more than a day ahead of the writer's
//     clock (damaged: no clock runs that fast) is stale too, rather than
//     block the name until that date; one dated less far ahead is waited
//     for. A write that replaces the tombstone of a delete
//     still in progress (stalled, or judged by such a clock) counts as
//     made after the delete, and stays, unless it lands between the
//     delete's last look at its tombstone and its removal: the delete
//     then removes it. Either way the write is not lost, however clocks
//     disagree: a write that replaces a tombstone first keeps its own
//     content as a version ("delete"), since no process can tell a dead
//     delete from a stalled one, and a store without rename removes
//     nothing conditionally. When the delete is dead, or saw the write
//     and left it, that version repeats the file's content. What stays
//     open: a further change to that write, made before a delete stalled
//     past its last look removes the file, is removed unkept (the
//     change keeps only what it replaced).
//   - A directory delete turns each file into a tombstone and then removes
//     the tree: a file that another process creates in the tree between
//     the two steps is removed without being kept.
//   - A file's content that is exactly a tombstone cannot be written
//     (the model is told so).
//   - A rename is a copy and a delete (memtool.Move without a Renamer),
//     and that delete keeps the old path's content as a version, as any
//     delete does.
//
// # Capabilities and cost
//
// The store New returns is a memtool.Wrapper: it forwards the inner
// store's optional capabilities (Renamer, RemoveAller, Tenanted,
// TenantLister), answering errors.ErrUnsupported for those the inner store
// lacks, and Tenant returns the inner tenant's store under the same policy,
// whose versions are kept inside that tenant. An edit costs a read of the old
// content, a listing of the trash (with the inner store's rename), an
// update of the version counter, a write of the version, a
// read of the usage counter and, once for each 256th of MaxBytes of new
// versions, an update of it (with MaxBytes on), and a
// conditional update instead of a write. A delete costs two renames, an
// update of each counter per file, and a few small operations on the
// trash (a directory, the path, a listing). When the usage counter passes
// MaxBytes, a change also lists the versions of every path that ever had
// one: when the versions are at the bound, once for each tenth of
// MaxBytes of new versions. To measure a str_replace in a
// 4 KiB file through Memory on memstore with and without the wrapper:
//
//	go test -run '^$' -bench . ./history
package history
