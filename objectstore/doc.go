// Package objectstore is a memtool.Store in cloud object storage, through
// gocloud.dev/blob: Amazon S3 (and S3-compatible services), Google Cloud
// Storage, Azure Blob Storage, and gocloud's in-memory and directory
// drivers. Open takes a URL (s3://bucket?region=…&prefix=…, gs://…,
// azblob://…, mem+blob://, file+blob:///abs/dir); New takes a
// *blob.Bucket you opened yourself.
//
// # Layout
//
// Every key starts with the store's prefix (Options.Prefix, or prefix=…
// in the URL). The tenant-less memory is under PREFIX/f/, tenant ID's under
// PREFIX/tenants/ID/f/; the object PREFIX/.memtool-tenancy records, once,
// whether the store is single- or multi-tenant.
//
//   - The file /memories/a/b.txt is the object …/f/a/b.txt.
//   - The directory /memories/a is the empty marker object
//     …/f/a/.memtool-dir. Directories are real, as on the other stores:
//     creating /memories/a/b.txt creates a/, and deleting b.txt leaves an
//     empty a/ that is still listed. The path gate refuses names starting
//     with ".memtool", so no memory can name a marker.
//   - Listing a directory is one delimiter listing of its prefix (…/f/a/),
//     so on S3, GCS and Azure it costs what it lists, not the size of the
//     memory or the bucket. (gocloud's directory driver walks the
//     directory's subtree on disk to list it.)
//
// # Guarantees, and what is weaker than on a database
//
// Within one process, every change holds one lock per bucket, so the store
// is linearizable there on every driver, and passes storetest.
//
// Across processes (and machines), memtool uses the service's conditional
// writes:
//
//   - create, mkdir, and the destination of a rename are written with
//     if-not-exists (blob.WriterOptions.IfNotExist; S3 If-None-Match: *),
//     so of racing creates or renames onto one name exactly one wins;
//   - on S3, an edit (Update) reads the object with its ETag and writes with
//     If-Match on it, starting again if another writer got in between, so no
//     update is lost. gocloud.dev/blob has no if-match write; this package
//     talks to the bucket's S3 client for it (Options.S3Bucket).
//
// What is weaker:
//
//   - On GCS and Azure, edits are serialised within a process only: two
//     processes editing one file at once can lose an update. (Their
//     generation-match and If-Match conditions would close this; not done
//     yet.) Run one writer process per memory there, or use S3, SQLite or
//     PostgreSQL for many writers.
//   - gocloud's directory driver (file+blob) checks if-not-exists under an
//     in-process lock and does not fsync: it is for tests and for one
//     process; the memory driver (mem+blob) lives in one process and is
//     gone when it exits (each Open is a new, empty bucket).
//   - A file and a directory of the same name are different keys, so two
//     processes that create the file a and the directory a at the same
//     moment can both succeed; a directory removed by one process while
//     another creates a file in it can leave that file without its marker.
//     The file stays readable and listed; creating anything in that
//     directory writes its marker again.
//   - Rename is copy and delete, not one atomic step. For a file: the
//     destination is written with if-not-exists, then the source deleted; a
//     reader in between may see both, and a crash in between leaves both,
//     with the same content (nothing is lost; delete the source). For a
//     directory: its marker is written at the destination with
//     if-not-exists (so exactly one racing rename wins), every object under
//     it is copied with the service's server-side copy, and only then is the
//     source deleted, files first and markers last. A failed copy removes
//     what it had copied. A crash leaves both directories: if every file of
//     the source is also in the destination, the copy was complete and the
//     source can be removed; otherwise remove the destination and the
//     source is whole.
//   - RemoveAll deletes files first and directory markers last, deepest
//     first, so an interrupted RemoveAll leaves a smaller tree, never an
//     entry whose directory is gone; run it again to finish.
//   - A write is durable when the service acknowledges it (S3, GCS and
//     Azure store it redundantly before they answer).
//
// # Tenants
//
// The store New or Open returns is the tenant-less one; Tenant(ctx, id)
// returns the store of one tenant, whose keys are all under
// PREFIX/tenants/ID/f/. Tenants lists the tenants that hold at least one
// entry. The first use decides the mode for good (memtool.ErrTenancy).
// Different prefixes of one bucket are independent stores.
package objectstore
