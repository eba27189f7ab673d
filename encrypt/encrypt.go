package encrypt

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/memtool/memtool"
)

// The file format: a fixed header, then the AES-256-GCM ciphertext with its
// tag.
//
//	magic   4 bytes  "mte2" ("mte1" in files written before mte2)
//	key id 16 bytes  the master key's ID, zero-padded
//	salt   32 bytes  random; the file key is HKDF-SHA256(master, salt, info)
//	nonce  12 bytes  random
//	ciphertext and 16-byte tag
//
// The associated data is the header, then the tenant preceded by its length
// (4 bytes, big-endian). In mte1 the virtual path followed, the same way,
// so that an mte1 file opens only at the path it was written for; mte2
// leaves the path out, so that a rename can move the stored bytes as they
// are.
const (
	magic      = "mte2"
	magicV1    = "mte1"
	saltLen    = 32
	nonceLen   = 12
	tagLen     = 16
	headerLen  = len(magic) + MaxKeyIDLen + saltLen + nonceLen
	Overhead   = headerLen + tagLen // bytes a stored file has more than its plaintext
	fileKeyTag = "memtool encrypt v1 file key"
)

// Errors of opening a file, checked with errors.Is on an *Error.
var (
	// ErrNotEncrypted: the stored bytes are not in this package's format.
	ErrNotEncrypted = errors.New("not encrypted by memtool")
	// ErrUnknownKey: the file names a key that is not configured.
	ErrUnknownKey = errors.New("encrypted with a key that is not configured")
	// ErrAuth: authentication failed: the bytes were changed, the file
	// comes from another tenant's store, the key is wrong, or a file in
	// the old format (mte1) was moved to another path outside memtool.
	ErrAuth = errors.New("integrity check failed")
)

// An Error is a file that could not be opened. Nothing of it is returned.
type Error struct {
	Path  string // the virtual path
	KeyID string // the key the file names, if it could be read
	Err   error  // ErrNotEncrypted, ErrUnknownKey or ErrAuth

	// later is the magic of a later format than this package reads
	// (ErrNotEncrypted), "" for bytes in no format of it.
	later string
}

func (e *Error) Error() string { return e.reason() }

// Unwrap returns the class, and a memtool.Refusal with the same text, which
// memtool.Memory shows the model verbatim.
func (e *Error) Unwrap() []error {
	return []error{e.Err, memtool.Refusal(e.reason())}
}

func (e *Error) reason() string {
	return fmt.Sprintf("The file %s cannot be opened: %s. Nothing was read.", e.Path, e.cause())
}

// cause says why the file does not open, as a clause.
func (e *Error) cause() string {
	switch e.Err {
	case ErrNotEncrypted:
		if e.later != "" {
			return fmt.Sprintf("it is encrypted in a format this memtool does not read (%s: written by a newer memtool, or damaged)", e.later)
		}
		return "it is not encrypted in memtool's format (written without encryption, or damaged)"
	case ErrUnknownKey:
		return fmt.Sprintf("it was encrypted with key %q, which is not configured", e.KeyID)
	}
	return "its integrity check failed (it was changed outside memtool, it comes from another tenant's store, or the key is wrong)"
}

// A renameError is a rename refused because a file of the old format in
// the tree to move cannot be opened, to be sealed again in the new one: an
// mte1 file moved as it is would never open again. It is an *Error too.
type renameError struct {
	oldname string
	err     *Error
}

func (e *renameError) Error() string {
	return fmt.Sprintf("Cannot rename %s: the file %s was encrypted by an older memtool for its current path, and it cannot be opened to encrypt it for the new one: %s. Nothing was changed.",
		memtool.VirtualPath(e.oldname), e.err.Path, e.err.cause())
}

// Unwrap returns the refusal the model reads first, then the *Error.
func (e *renameError) Unwrap() []error {
	return []error{memtool.Refusal(e.Error()), e.err}
}

// Options configure the wrapper. nil means the defaults.
type Options struct {
	// Tenant is bound into every file, so that a file copied from another
	// tenant's store does not open. Use the tenant id the wrapped store
	// serves, if any.
	Tenant string
}

// Store wraps a memtool.Store and keeps every file encrypted in it. Use New.
type Store struct {
	memtool.Forwarder // Rename is the Store's own; RemoveAll needs no keys
	inner             memtool.Store
	write             Key            // encrypts new content
	keys              map[string]Key // open files, by ID
	tenant            string
}

// New wraps inner. keys[0] encrypts every write; every key in keys opens
// files that name it (keep old keys there while rotating). The result is
// a memtool.Wrapper: it forwards the optional capabilities of inner (a
// rename moves the stored bytes with the inner store's own atomic rename,
// after sealing any file of the old, path-bound format (mte1) in the tree
// again in the current one), and Tenant returns the tenant's store with
// the same keys, binding its files to that tenant. A key that has no
// secret (a Key literal, not made by NewKey or ParseKeys) is refused.
func New(inner memtool.Store, keys []Key, opts *Options) (memtool.Store, error) {
	if len(keys) == 0 {
		return nil, errors.New("encrypt: no key")
	}
	s := &Store{inner: inner, write: keys[0], keys: map[string]Key{}}
	for _, k := range keys {
		if err := validKeyID(k.ID); err != nil {
			return nil, err
		}
		if k.secret == [32]byte{} {
			// A Key literal: its secret was never set.
			return nil, fmt.Errorf("encrypt: key %q has no secret (all zeros), which keeps nothing secret; make keys with NewKey or ParseKeys", k.ID)
		}
		if _, dup := s.keys[k.ID]; dup {
			return nil, fmt.Errorf("encrypt: key ID %q given twice", k.ID)
		}
		s.keys[k.ID] = k
	}
	if opts != nil {
		s.tenant = opts.Tenant
	}
	s.forward()
	return s, nil
}

// forward sets s's Forwarder: a tenant's store has the same keys and its
// files bound to the tenant (Options.Tenant).
func (s *Store) forward() {
	s.Forwarder = memtool.Forward(s.inner, func(t memtool.Store, id string) memtool.Store {
		ts := &Store{inner: t, write: s.write, keys: s.keys, tenant: id}
		ts.forward()
		return ts
	})
}

var _ memtool.Wrapper = (*Store)(nil)

// associated returns the data bound to a file besides its bytes: the
// header, the tenant and, in the old format only, the file's path.
func (s *Store) associated(header []byte, name string) []byte {
	ad := make([]byte, 0, len(header)+4+len(s.tenant))
	ad = append(ad, header...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(s.tenant)))
	ad = append(ad, s.tenant...)
	if string(header[:len(magicV1)]) != magicV1 {
		return ad
	}
	vp := memtool.VirtualPath(name)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(vp)))
	return append(ad, vp...)
}

func fileAEAD(k Key, salt []byte) (cipher.AEAD, error) {
	fk, err := hkdf.Key(sha256.New, k.secret[:], salt, fileKeyTag, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(fk)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts plain in the current format, which opens at any path of
// the tenant.
func (s *Store) seal(plain []byte) ([]byte, error) {
	out := make([]byte, headerLen, headerLen+len(plain)+tagLen)
	copy(out, magic)
	copy(out[len(magic):], s.write.ID)
	random := out[len(magic)+MaxKeyIDLen : headerLen]
	if _, err := rand.Read(random); err != nil {
		return nil, err
	}
	aead, err := fileAEAD(s.write, random[:saltLen])
	if err != nil {
		return nil, err
	}
	return aead.Seal(out, random[saltLen:], plain, s.associated(out[:headerLen], "")), nil
}

// open decrypts the stored bytes of name, in either format.
func (s *Store) open(name string, data []byte) ([]byte, error) {
	vp := memtool.VirtualPath(name)
	if len(data) < Overhead || !isSealed(data) {
		return nil, &Error{Path: vp, Err: ErrNotEncrypted, later: laterMagic(data)}
	}
	id := string(bytes.TrimRight(data[len(magic):len(magic)+MaxKeyIDLen], "\x00"))
	k, ok := s.keys[id]
	if !ok {
		if validKeyID(id) != nil {
			return nil, &Error{Path: vp, Err: ErrAuth} // a damaged header
		}
		return nil, &Error{Path: vp, KeyID: id, Err: ErrUnknownKey}
	}
	random := data[len(magic)+MaxKeyIDLen : headerLen]
	aead, err := fileAEAD(k, random[:saltLen])
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, random[saltLen:], data[headerLen:], s.associated(data[:headerLen], name))
	if err != nil {
		return nil, &Error{Path: vp, KeyID: id, Err: ErrAuth}
	}
	return plain, nil
}

// isSealed reports whether data starts with the magic of either format.
func isSealed(data []byte) bool {
	return bytes.HasPrefix(data, []byte(magic)) || bytes.HasPrefix(data, []byte(magicV1))
}

// laterMagic returns the magic data starts with if it is that of a later
// format than mte2 ("mte" and a digit from 3), and "" otherwise.
func laterMagic(data []byte) string {
	if len(data) < len(magic) || !bytes.HasPrefix(data, []byte("mte")) {
		return ""
	}
	if d := data[len(magic)-1]; d < '3' || d > '9' {
		return ""
	}
	return string(data[:len(magic)])
}

// plainSize is the size of a stored file's plaintext.
func plainSize(fi memtool.FileInfo) memtool.FileInfo {
	if fi.IsRegular() {
		fi.Size = max(0, fi.Size-int64(Overhead))
	}
	return fi
}

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	fi, err := s.inner.Stat(ctx, name)
	return plainSize(fi), err
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	entries, err := s.inner.ReadDir(ctx, name)
	for i := range entries {
		entries[i] = plainSize(entries[i])
	}
	return entries, err
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, err := s.inner.ReadFile(ctx, name, storedLimit(limit))
	if err != nil {
		return nil, err
	}
	plain, err := s.open(name, data)
	if err != nil {
		return nil, err
	}
	if int64(len(plain)) > limit {
		return nil, fmt.Errorf("read %s: %w", name, memtool.ErrTooLarge)
	}
	return plain, nil
}

// storedLimit is the limit on stored bytes for a limit on plaintext. A
// limit past noLimit (math.MaxInt64 for none) becomes noLimit's, which
// neither overflows here nor in a store that reads limit+1 bytes.
func storedLimit(limit int64) int64 {
	return min(limit, noLimit) + int64(Overhead)
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sealed, err := s.seal(data)
	if err != nil {
		return err
	}
	return s.inner.WriteFile(ctx, name, sealed, mode)
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	var tooLarge bool
	err := s.inner.Update(ctx, name, storedLimit(limit), func(old []byte) ([]byte, error) {
		plain, err := s.open(name, old)
		if err != nil {
			return nil, err
		}
		if int64(len(plain)) > limit {
			tooLarge = true
			return nil, errTooLarge
		}
		data, err := fn(plain)
		if err != nil {
			return nil, err
		}
		return s.seal(data)
	})
	if tooLarge && err == errTooLarge {
		return fmt.Errorf("update %s: %w", name, memtool.ErrTooLarge)
	}
	return err
}

var errTooLarge = errors.New("too large")

func (s *Store) Mkdir(ctx context.Context, name string) error { return s.inner.Mkdir(ctx, name) }

func (s *Store) Remove(ctx context.Context, name string) error { return s.inner.Remove(ctx, name) }

// Rename forwards Rename (ErrUnsupported, before anything else, when
// inner has none), after sealing every mte1 file below oldname again in
// mte2, which opens at the new path as well. Each of those is one atomic Update that keeps the
// text; the move itself is the inner store's atomic, no-replace rename.
// An mte1 file that cannot be opened refuses the rename, since it could
// never be opened at the new path; the files sealed again before it stay
// in mte2, with their text unchanged.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if !memtool.Has[memtool.Renamer](s.inner) {
		return memtool.Unsupported("rename", oldname)
	}
	err := memtool.Walk(ctx, s.inner, oldname, func(name string, fi memtool.FileInfo) error {
		if !fi.IsRegular() {
			return nil
		}
		return s.upgrade(ctx, name) // a file gone meanwhile is done
	})
	var ee *Error
	if errors.As(err, &ee) {
		return &renameError{oldname: oldname, err: ee}
	}
	if err != nil {
		return err
	}
	return memtool.ForwardRename(ctx, s.inner, oldname, newname)
}

// errUnchanged makes Update keep a file as it is.
var errUnchanged = errors.New("unchanged")

// upgrade seals the file name again in the current format if it is in
// mte1; any other file stays as it is.
func (s *Store) upgrade(ctx context.Context, name string) error {
	_, err := s.reseal(ctx, name, isV1, false)
	return err
}

func isV1(data []byte) bool { return bytes.HasPrefix(data, []byte(magicV1)) }
