// Package encrypt wraps a memtool.Store and keeps every file encrypted in
// it, so that the storage (a directory, a database, a backup of either)
// holds no readable memory.
//
//	keys, err := encrypt.LoadKeys(os.Getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
//	store, err := encrypt.New(inner, keys, &encrypt.Options{Tenant: "alice"})
//
// # Construction
//
// Each write encrypts the whole file with AES-256-GCM under a fresh file
// key, HKDF-SHA256(master key, random 32-byte salt, "memtool encrypt v1
// file key"), with a random nonce, so no key ever encrypts two messages.
// The stored file is a fixed 64-byte header (magic "mte2", the master
// key's ID, the salt, the nonce), the ciphertext and the 16-byte tag:
// Overhead (80) bytes more than the text. The associated data is the
// header and the tenant, so a file does not open
//
//   - if any byte of it was changed, or it was truncated;
//   - in another tenant's store;
//   - with a wrong key.
//
// Each of these fails with an *Error (errors.Is ErrAuth, ErrUnknownKey or
// ErrNotEncrypted) and returns nothing; memtool.Memory shows the model a
// clear message, such as
//
//	The file /memories/a.md cannot be opened: its integrity check failed (it was changed outside memtool, it comes from another tenant's store, or the key is wrong). Nothing was read.
//
// The path is not bound, so that a rename moves the stored bytes as they
// are (see Capabilities): a file moved or copied to another path of the
// same tenant outside memtool opens there (see What is not hidden).
//
// Files written before mte2 have the magic "mte1" and the file's virtual
// path in their associated data as well. They still open, at the path they
// were written for; every write, and Rekey, stores mte2. A memtool from
// before mte2 cannot open mte2 files (it reports them as not encrypted in
// its format), so every process that shares a store must be updated
// together, and there is no way back but restoring a backup.
//
// Only the standard library is used (crypto/aes, crypto/cipher,
// crypto/hkdf); XChaCha20-Poly1305 would need golang.org/x/crypto.
//
// # Keys
//
// A key is 32 random bytes with an ID of up to 16 letters, digits, '-',
// '_' or '.', written "ID:base64" (`memtool keygen` makes one). LoadKeys
// reads keys from an environment variable, else from a key file that
// another variable names, which group and others may not read, write or
// run (0600, 0400, 0700); several keys are separated by
// newlines, spaces or commas. The first key encrypts; all of them open the
// files that name them. To rotate: put a new key first, keep the old ones,
// restart every process that uses the store so that it writes with the
// new key, run Rekey (it rewrites every file not yet under the first key,
// also in the entries that policies over the encryption keep for
// themselves, when it is told their names as `memtool rekey` does), and
// drop the old keys only once it succeeded. The store may be in use
// meanwhile: Rekey walks it again until a walk finds no file left to
// rewrite, and fails with ErrRekeyIncomplete if files under an old key
// keep turning up (see Rekey).
//
// # What is not hidden
//
//   - Names: paths and directory structure are stored as they are.
//   - Sizes: a file's stored size is its text's size plus 80 bytes.
//   - Times and activity: when files are written, read and removed.
//   - Replay and moves: an older valid version of a file put back at its
//     path, or a file moved or copied to another path of the same tenant,
//     by someone with write access to the storage, opens without error
//     (nothing records which version is the latest, nor where a file
//     belongs), and a file can be deleted. A file copied into a store of
//     another tenant (another Options.Tenant), changed bytes and a wrong
//     key are still detected.
//
// Encryption does not replace the path gate or the storage's access
// control; it protects the data at rest, not a running process that holds
// the keys.
//
// # Capabilities
//
// The store New returns is a memtool.Wrapper: it forwards the inner
// store's optional capabilities (Renamer, RemoveAller, Tenanted,
// TenantLister), answering errors.ErrUnsupported for those the inner store
// lacks, and Tenant returns the inner tenant's store under the same policy,
// its files bound to that tenant (Options.Tenant). Rename is the inner store's own
// rename, which moves the stored bytes without encrypting them again: it
// is exactly as atomic, no-replace, crash-safe and safe across processes
// as the inner store's. Before it, every mte1 file in the tree to move is
// sealed again in mte2 in place (one atomic Update each, the text
// unchanged), so that it still opens at the new path; an mte1 file that
// cannot be opened (its key is not configured, or it is damaged) refuses
// the rename, which then moves nothing (the files sealed again before it
// stay in mte2). Over a store without Renamer,
// Memory renames by copying through the wrapper and removing (see
// memtool.Renamer). Stat and ReadDir report the text's size.
//
// # Cost
//
// Each write costs one seal and each read one open (an HKDF derivation and
// AES-GCM over the whole file); an edit costs both. A rename reads every
// file in the tree it moves, to find those of the old format, and seals
// those again; it never rewrites an mte2 file. Rekey reads and opens every
// file at least twice (two walks) and rewrites only those not yet under
// the first key. The benchmarks compare the wrapper with memstore alone:
//
//	go test -run '^$' -bench . ./encrypt
package encrypt
