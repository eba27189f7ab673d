// Package limits wraps a memtool.Store with size limits and quotas: the
// largest file, the most files and directories, the most bytes in all
// files, the longest path and the deepest one.
//
//	store := limits.New(filestore, &limits.Options{
//		MaxFileSize: 64 << 10, MaxFiles: 500, MaxBytes: 10 << 20,
//		MaxPathLength: 256, MaxDepth: 8,
//	})
//	mem := memtool.New(store, nil)
//
// # Refusals
//
// An operation that would cross a limit fails with an *Error and changes
// nothing. Its message names the limit and says by how much it would be
// crossed, for example
//
//	Limit exceeded (file size): /memories/notes.md would be 1,025 bytes, 1 byte over the limit of 1,024 bytes. Nothing was changed.
//
// memtool.Memory shows that text to the model (an *Error unwraps to a
// memtool.Refusal). A command that
// fails this way leaves no trace: Memory removes the parent directories it
// created for it.
//
// Only growth is refused: a file that is over MaxFileSize already (the
// limit was lowered) may still be edited if it does not grow, and removing
// is always allowed. The inner store checks the old size and writes in one
// update, so a file over the limit is never made by a write, also when
// other processes change it meanwhile. Directories count towards
// MaxFiles, so that empty directories cannot be used to get round it. A
// rename changes neither the count nor the bytes; it is checked against
// the path limits for every entry it moves, and keeps out the wrapper's
// (and its tenant's other stores') creates and renames from its check to
// its move. An entry another process makes in the tree meanwhile is moved
// unchecked.
//
// # Counting
//
// MaxFiles and MaxBytes need the usage of the whole store, which the
// wrapper counts by walking the store at each operation that may grow it,
// so that writes by other processes sharing the store count too. Those
// operations, and renames, are serialised within the wrapper, and among
// all the stores its Tenant returns for one tenant, so the usage a check
// sees is the usage its write lands on (a remove landing in between only
// leaves less than was counted). Processes writing at the same moment, or
// wrappers New made separately over the same store, may each pass the
// check: a store-wide limit may be overshot by one operation for each
// other process (or wrapper) writing then. What is written below the
// wrapper is not checked either: expiry's gc putting back a file used
// during its run, and memtool restore, can take a store past MaxFiles or
// MaxBytes. What the policies below keep for themselves, and hide, is not
// counted: expiry's trash and access index, and history's versions (which
// history bounds with its own MaxBytes). The walk
// costs time proportional to the store's entries;
// MaxFileSize, MaxPathLength and MaxDepth need no walk of the store (a
// rename walks the tree it moves).
//
// # Capabilities
//
// The store New returns is a memtool.Wrapper: it forwards the inner
// store's optional capabilities (Renamer, RemoveAller, Tenanted,
// TenantLister), answering errors.ErrUnsupported for those the inner store
// lacks, and Tenant returns the inner tenant's store under the same policy,
// with the same limits, counted in that tenant alone. Without an inner Renamer, Memory
// renames by copying and then removing, so a rename near MaxFiles or
// MaxBytes may be refused for the moment when both copies exist.
//
// # Cost
//
// With MaxFiles or MaxBytes on, a file write walks the store at most
// once; so does an edit with MaxBytes on, and a new directory with
// MaxFiles; reads and removes walk nothing. To measure, with every limit on and 100 files of 4 KiB in 10
// directories on memstore:
//
//	go test -run '^$' -bench . ./limits
package limits
