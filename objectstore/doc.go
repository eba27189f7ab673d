// Package objectstore is a memtool.Store in object storage: Amazon S3 (and
// S3-compatible services), Google Cloud Storage, Azure Blob Storage, and a
// bucket in memory or in a directory, for tests and one process. Open
// takes a URL (s3://bucket?region=…&prefix=…, gs://…, azblob://…,
// mem+blob://, file+blob:///abs/dir); NewS3 takes an S3 client you made
// yourself.
//
// S3 is spoken to through the AWS SDK's S3 client
// (github.com/aws/aws-sdk-go-v2/service/s3), with credentials found as the
// SDK's config package finds them (the environment, the AWS files, SSO,
// the instance's role). The in-memory and directory buckets are this
// package's own; the directory bucket lays its files out as gocloud.dev's
// directory driver (which earlier versions used) did, so a directory
// written by either reads the same in both.
//
// # Build tags
//
// The S3, in-memory and directory buckets are always built in, and the
// default build imports nothing of gocloud.dev. The Google Cloud Storage
// and Azure Blob Storage drivers, which are gocloud.dev/blob's, are built
// in only with the build tags gcs and azure, since their client libraries
// (gRPC, protobuf and OpenTelemetry among them) add tens of megabytes to
// memtool's binary and slow down every start:
//
//	go install -tags gcs,azure github.com/memtool/memtool/cmd/memtool@latest
//
// Without its tag, Open refuses a URL of that driver with an error that
// wraps ErrNotBuilt and names the tag (NotBuilt gives it ahead of time).
// A build with either tag also has New, which takes a *blob.Bucket you
// opened yourself through gocloud.dev/blob.
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
//     memory or the bucket. (The directory bucket walks the directory's
//     subtree on disk to list it.)
//
// # Guarantees, and what is weaker than on a database
//
// Within one process, every change holds one lock per bucket, so the store
// is linearizable there on every driver, and passes storetest.
//
// Across processes (and machines), memtool uses the service's conditional
// requests:
//
//   - create (also a write with Replace where no file is), mkdir, and
//     the destination of a rename are written with if-not-exists (S3 If-None-Match: *; on GCS and Azure gocloud's
//     IfNotExist), so of racing creates or renames onto one name exactly
//     one wins;
//   - on S3, an edit (Update) reads the object with its ETag and writes with
//     If-Match on it, starting again if another writer got in between, so no
//     update is lost;
//   - on S3, a rename deletes a source only on the ETag it copied (DELETE
//     with If-Match), and a create checks that its directory is still
//     there after writing; see "Rename on S3".
//
// # Rename on S3
//
// S3 has no rename and no condition that spans two objects. A rename moves
// each object with three conditional requests: it reads the source and
// its ETag, writes the copy only if nothing is at the destination
// (If-None-Match: *), and deletes the source only on the ETag it read
// (If-Match). A directory is moved object by object: its marker is claimed
// at the destination first, every object under it copied, then the sources
// deleted, files first and markers last. Before its first rename a store
// checks that the service honours If-Match on DELETE (it writes an object
// of its own under the prefix, asks to delete it on a wrong ETag, and
// expects 412); on a service that ignores the condition, as some
// S3-compatible ones do, every rename is refused with a memtool.Refusal
// and changes nothing. What a rename guarantees across processes:
//
//   - An edit acknowledged while a file is being renamed, alone or in its
//     directory, is in the renamed file. An edit between the copy and the
//     delete fails the delete; the rename then copies the new content over
//     its copy (If-Match on the copy's ETag) and deletes again. If the
//     source keeps changing, the rename gives up after a bounded number of
//     tries with memtool.ErrBusy, deleting its copy and leaving the source
//     as it is.
//   - An edit never lands on both names: until the rename has deleted the
//     source, its copy carries the metadata memtool-moving-from, and an
//     edit or a rename of the copy is refused (memtool.ErrBusy, with a text
//     that says why). The rename then writes the copy again, marked done.
//   - A file or directory created in a directory while it is being renamed
//     ends in the moved tree, or its create fails with ErrNotExist, having
//     changed nothing (memtool.Memory then makes the directory again and
//     creates the file in it). The create checks, after writing, that its
//     directory's marker is still there, and deletes its own object (on
//     its ETag) if not; the rename, after deleting the markers, lists the
//     source again and moves what it finds. One of the two always sees the
//     other.
//   - A file created in the destination while a directory is renamed into
//     it is never overwritten: the rename fails with ErrExist and deletes
//     only what it wrote.
//   - A directory rename never leaves a file it moved without its
//     directory: if another process removes a subdirectory of the source
//     after the rename moved the files out of it (it is empty then), the
//     moved subdirectory stays; one that was empty when it was copied is
//     removed at both names.
//   - A source whose delete the service refuses (403 AccessDenied, say,
//     from a bucket policy without s3:DeleteObject) stays as it was, and
//     its copy is deleted again: a file rename then fails as one that
//     changed nothing; a directory rename leaves that file under the old
//     name, as for one that kept changing.
//   - A rename that has begun deleting sources finishes whatever ctx
//     says. If it then fails having deleted one, or leaving its copy, it
//     answers a refusal that says what it left where, or an error wrapping
//     memtool.ErrOutcomeUnknown: never the cancellation, or another error
//     that reads as "nothing changed".
//   - No rename deletes anything but a source (a file, or a directory's
//     marker) on the ETag it read before copying it (and, after a lost
//     answer, on its write ID; see "Lost answers"), or an object it wrote
//     itself, on that object's ETag; a create deletes nothing but its own
//     object, on its ETag.
//
// What is weaker:
//
//   - A rename is not one atomic step. A reader in between may see the
//     file at both names, or part of a directory at each; a crash in
//     between leaves both, and nothing is lost. If the crash came after
//     the source was deleted, the first edit or rename of the copy
//     finishes the rename; if before, they are refused until one of the
//     two files is deleted.
//   - If, while a rename runs, the source is edited and its copy replaced
//     by an unconditional write (WriteFile with Replace), both stay, and
//     the rename fails with a refusal that says so.
//   - A directory rename whose files keep changing moves all but those, and
//     fails with a refusal that names the files still under the old name,
//     in their directory. So does one that cannot move a file created in
//     the source while it ran (its name was taken in the destination).
//   - If another process makes the old directory again while a rename
//     finishes (Memory does, for a create in it), a file created in the
//     old directory just before can stay there instead of moving.
//   - An ETag is the MD5 of the content: if, while a create undoes its
//     object, a rename moved it and another process created a file of the
//     same bytes at that name, the undo deletes that file.
//
// # Lost answers
//
// S3 may make a change and fail to answer (a 5xx, a broken connection),
// and a request sent again then meets the change it made itself, or one
// another process made since. On S3 memtool sends a change again itself
// (up to three requests, after the SDK's delays) and tells its own
// change from another process's:
//
//   - A delete (Remove, RemoveAll, a rename's of its source) whose answer
//     was lost is sent again only if the object it meant is still there:
//     the same ETag and the same random write ID, which every write
//     stores in its object's metadata. If the object is gone, the delete
//     counts as made. If another object is there (a file another process
//     created since, or an edit it made), the delete is not sent again,
//     that object stays, and the change fails with an error wrapping
//     memtool.ErrOutcomeUnknown; a rename then keeps the file at both
//     names, its copy a file of its own.
//   - A write (a create, an edit, a replace) whose answer was lost looks
//     for its own write ID at the key before it is sent again. If it is
//     there, the write succeeds, made once. If an edit finds the object
//     it replaces still there (its ETag, so the same bytes: an edit that
//     another process undid to the byte meanwhile is made again), it is
//     sent again. Otherwise the write may have been made and then
//     replaced or removed by another process, which may have edited it
//     (sent again, it would be made twice, or undo that process's
//     change), or never made: it is not sent again, and the change fails
//     with an error wrapping memtool.ErrOutcomeUnknown. A directory
//     rename whose copy of a file so failed deletes nothing: the new
//     directory and the copies stay, so that a copy made late is never
//     left without its directory.
//   - Any other change that fails after an answer was lost, or when ctx
//     ended while its request was out, fails with an error wrapping
//     memtool.ErrOutcomeUnknown, never one that says nothing changed.
//
// # Other services, and other weak points
//
//   - On GCS and Azure (gocloud.dev/blob) the services' clients send a
//     request again themselves. A write, a delete or a mkdir that fails
//     after its request went out (a 5xx or no answer after those retries,
//     or ctx ended while it was out) looks for its own write ID (a write)
//     and, not finding it, fails with an error wrapping
//     memtool.ErrOutcomeUnknown; a file rename whose source's delete so
//     failed keeps the file at both names, and a directory rename whose
//     copy of a file so failed keeps the new directory and its copies. A
//     refusal (a 4xx) is a plain failure: nothing changed.
//   - On GCS and Azure, edits and renames are serialised within a process
//     only: two processes editing one file at once can lose an update, and
//     a rename in one process can lose an edit another process makes to the
//     source at the same moment, or (for a directory) overwrite a file it
//     creates in the destination. (Their generation-match and If-Match
//     conditions would close this; not done yet.) Run one writer process
//     per memory there, or use S3, SQLite or PostgreSQL for many writers.
//   - The directory bucket (file+blob) does not fsync, edits and renames
//     are serialised within one process only, and it refuses names ending
//     in .attrs (which gocloud's driver, and so earlier versions, skip): it
//     is for tests and for one process. A create there links its file into
//     place, which fails if the name is taken, also by another process. The
//     memory bucket (mem+blob) lives in one process and is gone when it
//     exits (each Open is a new, empty bucket).
//   - A file and a directory of the same name are different keys, so two
//     processes that create the file a and the directory a at the same
//     moment can both succeed. Of two processes that remove one entry at
//     once, one may answer ErrNotExist. Remove and RemoveAll do not look for
//     entries created while they run: a directory removed by one process
//     while another creates a file in it can leave that file without its
//     marker. The file stays readable and listed; creating anything in
//     that directory writes its marker again.
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
// entry. The first change decides the mode for good (memtool.ErrTenancy);
// a read of an unused store decides nothing.
// Different prefixes of one bucket are independent stores, unless one
// lies in the other's memories (under PREFIX/f/ or PREFIX/tenants/),
// where its keys would be the other's entries: a store inside one that
// is there is refused on its first use (a prefix beside a store,
// PREFIX/backup say, is free). A store made first inside a prefix that
// holds none yet is not found when one is later made around it.
package objectstore
