// Package keys keeps the API keys of a memtool server: who may use which
// tenant's memory, and how (read, write, admin).
//
// A key's token, mt_<id>_<secret>, is shown once, by Keyring.Add: the
// secret is 256 bits from crypto/rand and the keyring keeps only its
// SHA-256, compared in constant time. Besides that hash a key has an id,
// a name, a tenant, a scope, a creation time, and maybe an expiry and a
// revocation time.
//
// # Where keys live
//
// Keys live where every replica of a server sees them (Open):
//
//   - a PostgreSQL or SQLite store: the table memtool_keys in the store's
//     own database, beside the store's tables;
//   - a directory store DIR: the file DIR.keys beside the directory, each
//     change written to a new file, fsynced and renamed over it under an
//     flock of DIR.keys.lock, so changes by several processes all land and
//     a crash leaves the old keys or the new ones;
//   - a record changed by hand into no valid key (no tenant, an unknown
//     scope, a bad hash, two records of one id) is never used: Verify of
//     its key fails (not as an invalid token), the other keys work, List
//     names it in an error wrapping ErrMalformed beside the other keys,
//     and the key file's changes keep it as written;
//   - any other store keeps no keys, and Open says so: give the server a
//     keyring of its own (memtool serve --keys URL).
//
// Copy moves keys, hashes and all, from one keyring to another of any
// kind (memtool migrate copies a store's keys with it): each token opens
// the copy as it opens the original.
//
// # Revocation
//
// Verify trusts what it read of a key for Options.CacheFor (2 s by
// default): a key revoked by any process stops working in every other
// process within that time, and at once in the process that revoked it.
package keys
