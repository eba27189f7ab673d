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
	"path"

	"github.com/memtool/memtool"
)

// The file format: a fixed header, then the AES-256-GCM ciphertext with its
// tag.
//
//	magic   4 bytes  "mte1"
//	key id 16 bytes  the master key's ID, zero-padded
//	salt   32 bytes  random; the file key is HKDF-SHA256(master, salt, info)
//	nonce  12 bytes  random
//	ciphertext and 16-byte tag
//
// The associated data is the header, then the tenant and the virtual path,
// each preceded by its length (4 bytes, big-endian).
const (
	magic      = "mte1"
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
	// ErrAuth: authentication failed: the bytes were changed, the file was
	// moved from another path or tenant, or the key is wrong.
	ErrAuth = errors.New("integrity check failed")
)

// An Error is a file that could not be opened. Nothing of it is returned.
type Error struct {
	Path  string // the virtual path
	KeyID string // the key the file names, if it could be read
	Err   error  // ErrNotEncrypted, ErrUnknownKey or ErrAuth
}

func (e *Error) Error() string { return e.reason() }

// Unwrap returns the class, and a memtool.Refusal with the same text, which
// memtool.Memory shows the model verbatim.
func (e *Error) Unwrap() []error {
	return []error{e.Err, memtool.Refusal(e.reason())}
}

func (e *Error) reason() string {
	switch e.Err {
	case ErrNotEncrypted:
		return fmt.Sprintf("The file %s cannot be opened: it is not encrypted in memtool's format (written without encryption, or damaged). Nothing was read.", e.Path)
	case ErrUnknownKey:
		return fmt.Sprintf("The file %s cannot be opened: it was encrypted with key %q, which is not configured. Nothing was read.", e.Path, e.KeyID)
	}
	return fmt.Sprintf("The file %s cannot be opened: its integrity check failed (it was changed outside memtool, moved here from another path or tenant, or the key is wrong). Nothing was read.", e.Path)
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
	inner  memtool.Store
	write  Key            // encrypts new content
	keys   map[string]Key // open files, by ID
	tenant string
}

// New wraps inner. keys[0] encrypts every write; every key in keys opens
// files that name it (keep old keys there while rotating). The result
// implements memtool.RemoveAller when inner does; it never implements
// memtool.Renamer, because a file's path is bound into it: Memory then
// renames by copying, which re-encrypts every file under its new path, and
// removing the old ones.
func New(inner memtool.Store, keys []Key, opts *Options) (memtool.Store, error) {
	if len(keys) == 0 {
		return nil, errors.New("encrypt: no key")
	}
	s := &Store{inner: inner, write: keys[0], keys: map[string]Key{}}
	for _, k := range keys {
		if err := validKeyID(k.ID); err != nil {
			return nil, err
		}
		if _, dup := s.keys[k.ID]; dup {
			return nil, fmt.Errorf("encrypt: key ID %q given twice", k.ID)
		}
		s.keys[k.ID] = k
	}
	if opts != nil {
		s.tenant = opts.Tenant
	}
	if _, ok := inner.(memtool.RemoveAller); ok {
		return removeAller{s}, nil
	}
	return s, nil
}

// removeAller forwards RemoveAll: removing needs no keys.
type removeAller struct{ *Store }

func (s removeAller) RemoveAll(ctx context.Context, name string) error {
	return s.inner.(memtool.RemoveAller).RemoveAll(ctx, name)
}

var _ memtool.Store = (*Store)(nil)

// associated returns the data bound to a file besides its bytes.
func (s *Store) associated(header []byte, name string) []byte {
	vp := memtool.VirtualPath(name)
	ad := make([]byte, 0, len(header)+8+len(s.tenant)+len(vp))
	ad = append(ad, header...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(s.tenant)))
	ad = append(ad, s.tenant...)
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

// seal encrypts plain as the content of name.
func (s *Store) seal(name string, plain []byte) ([]byte, error) {
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
	return aead.Seal(out, random[saltLen:], plain, s.associated(out[:headerLen], name)), nil
}

// open decrypts the stored bytes of name.
func (s *Store) open(name string, data []byte) ([]byte, error) {
	vp := memtool.VirtualPath(name)
	if len(data) < Overhead || string(data[:len(magic)]) != magic {
		return nil, &Error{Path: vp, Err: ErrNotEncrypted}
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

// storedLimit is the limit on stored bytes for a limit on plaintext.
func storedLimit(limit int64) int64 {
	if limit > 1<<62 {
		return limit
	}
	return limit + int64(Overhead)
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sealed, err := s.seal(name, data)
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
		return s.seal(name, data)
	})
	if tooLarge && err == errTooLarge {
		return fmt.Errorf("update %s: %w", name, memtool.ErrTooLarge)
	}
	return err
}

var errTooLarge = errors.New("too large")

func (s *Store) Mkdir(ctx context.Context, name string) error { return s.inner.Mkdir(ctx, name) }

func (s *Store) Remove(ctx context.Context, name string) error { return s.inner.Remove(ctx, name) }

// Rekey re-encrypts every file of s, a store that New returned, with its
// writing key (keys[0] of New), one file at a time, and returns how many
// it rewrote. Afterwards the other keys are no longer needed for them.
func Rekey(ctx context.Context, s memtool.Store) (int, error) {
	n := 0
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := s.ReadDir(ctx, dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			switch {
			case e.IsDir():
				if err := walk(name); err != nil {
					return err
				}
			case e.IsRegular():
				err := s.Update(ctx, name, 1<<62, func(old []byte) ([]byte, error) { return old, nil })
				if err != nil && !errors.Is(err, memtool.ErrNotExist) {
					return err
				}
				if err == nil {
					n++
				}
			}
		}
		return nil
	}
	err := walk("")
	return n, err
}
