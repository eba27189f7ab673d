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
// The stored file is a fixed 64-byte header (magic "mte1", the master
// key's ID, the salt, the nonce), the ciphertext and the 16-byte tag:
// Overhead (80) bytes more than the text. The associated data is the
// header, the tenant and the file's canonical virtual path, so a file does
// not open
//
//   - if any byte of it was changed, or it was truncated;
//   - at another path (a ciphertext copied or swapped onto another name);
//   - in another tenant's store;
//   - with a wrong key.
//
// Each of these fails with an *Error (errors.Is ErrAuth, ErrUnknownKey or
// ErrNotEncrypted) and returns nothing; memtool.Memory shows the model a
// clear message, such as
//
//	The file /memories/a.md cannot be opened: its integrity check failed (it was changed outside memtool, moved here from another path or tenant, or the key is wrong). Nothing was read.
//
// Only the standard library is used (crypto/aes, crypto/cipher,
// crypto/hkdf); XChaCha20-Poly1305 would need golang.org/x/crypto.
//
// # Keys
//
// A key is 32 random bytes with an ID of up to 16 letters, digits, '-',
// '_' or '.', written "ID:base64" (`memtool keygen` makes one). LoadKeys
// reads keys from an environment variable, else from a key file (mode 0600
// or stricter) that another variable names; several keys are separated by
// newlines, spaces or commas. The first key encrypts; all of them open the
// files that name them. To rotate: put a new key first, keep the old ones,
// run Rekey (it rewrites every file with the first key), then drop the old
// keys.
//
// # What is not hidden
//
//   - Names: paths and directory structure are stored as they are.
//   - Sizes: a file's stored size is its text's size plus 80 bytes.
//   - Times and activity: when files are written, read and removed.
//   - Replay: an older valid version of a file, put back at the same path
//     by someone with write access to the storage, opens without error
//     (nothing records which version is the latest), and a file can be
//     deleted.
//
// Encryption does not replace the path gate or the storage's access
// control; it protects the data at rest, not a running process that holds
// the keys.
//
// # Capabilities
//
// The store New returns never implements memtool.Renamer, since the inner
// store's rename would move ciphertexts bound to the old path: Memory
// renames by copying each file through the wrapper (which re-encrypts it
// under its new path) and removing the old tree. That fallback is atomic
// only within one process. RemoveAll is forwarded when the inner store has
// it. Stat and ReadDir report the text's size.
//
// # Cost
//
// On the reference machine (2 shared cores), a WriteFile and a ReadFile of
// 4 KiB on memstore take about 20 µs together instead of 3 µs (about 8 µs
// per operation), and a str_replace in a 4 KiB file through Memory about
// 40 µs instead of 18 µs:
//
//	go test -run '^$' -bench . ./encrypt
package encrypt
