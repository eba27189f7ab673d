package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/lru"
)

// Scope is what a key may do. Scopes are ordered: each allows what the
// ones below it allow.
type Scope int

const (
	Read  Scope = iota + 1 // view
	Write                  // every command of the memory tool
	Admin                  // Write, on any tenant named in a request, and listing tenants
)

// ParseScope reads a scope's name: read, write or admin.
func ParseScope(s string) (Scope, error) {
	switch s {
	case "read":
		return Read, nil
	case "write":
		return Write, nil
	case "admin":
		return Admin, nil
	}
	return 0, fmt.Errorf("invalid scope %q: want read, write or admin", s)
}

func (s Scope) String() string {
	switch s {
	case Read:
		return "read"
	case Write:
		return "write"
	case Admin:
		return "admin"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// A Key is what the keyring keeps of an API key, the token aside.
type Key struct {
	ID      string
	Name    string
	Tenant  string
	Scope   Scope
	Created time.Time
	Expires time.Time // zero: never
	Revoked time.Time // zero: not revoked
}

// Usable reports why the key cannot be used at now, or nil if it can.
func (k Key) Usable(now time.Time) error {
	switch {
	case !k.Revoked.IsZero():
		return fmt.Errorf("%w: key %s is revoked", ErrInvalidToken, k.ID)
	case !k.Expires.IsZero() && !now.Before(k.Expires):
		return fmt.Errorf("%w: key %s expired", ErrInvalidToken, k.ID)
	}
	return nil
}

// ErrInvalidToken is the error of a token that opens nothing: malformed,
// unknown, wrong, revoked or expired.
var ErrInvalidToken = errors.New("invalid API key")

// ErrNotFound is the error of a key id the keyring does not hold.
var ErrNotFound = errors.New("no such key")

// ErrMalformed is the error of a stored key record that is no valid key
// (changed by hand, say): never used as a key. Verify of its key fails
// with it (a failure of the keyring, not ErrInvalidToken); List returns
// the other keys with it.
var ErrMalformed = errors.New("malformed key record")

// A record is a key as a backend stores it: the key and the SHA-256 of
// its secret.
type record struct {
	Key
	hash []byte
}

// backend is where a keyring's records live.
type backend interface {
	// insert adds r; an id already present is an error wrapping errIDTaken.
	insert(ctx context.Context, r record) error
	// get returns the record of id, or an error wrapping ErrNotFound.
	get(ctx context.Context, id string) (record, error)
	// list returns every record, by creation time, then id; records that
	// are no valid key are left out, and an error wrapping ErrMalformed
	// names them.
	list(ctx context.Context) ([]record, error)
	// revoke marks id revoked at at, unless it already is.
	revoke(ctx context.Context, id string, at time.Time) error
	close() error
}

var errIDTaken = errors.New("key id taken")

// Options configure a Keyring. nil means the defaults.
type Options struct {
	// CacheFor is how long Verify trusts what it last read of a key: a
	// key revoked meanwhile still works for at most that long. Default
	// DefaultCacheFor; negative: no cache.
	CacheFor time.Duration
	// Create lets Open make a missing SQLite file (and its folder), or the
	// folder of a directory store's key file.
	Create bool
	// Now is the clock (default time.Now), for tests of expiry.
	Now func() time.Time
}

// DefaultCacheFor is the CacheFor of a keyring opened without one.
const DefaultCacheFor = 2 * time.Second

// A Keyring holds API keys. It is safe for concurrent use, also by
// several processes on one database or directory.
type Keyring struct {
	b        backend
	cacheFor time.Duration
	now      func() time.Time

	mu    sync.Mutex
	cache *lru.Cache[cached] // by key id
	// revoked counts the revocations made by this keyring: a Verify
	// caches what it read only if none was made while it read, so that
	// a read answered before a Revoke cannot be cached after it.
	revoked uint64
}

type cached struct {
	rec   record
	found bool
	read  time.Time
}

func newKeyring(b backend, opts *Options) *Keyring {
	k := &Keyring{b: b, cacheFor: DefaultCacheFor, now: time.Now}
	if opts != nil {
		if opts.CacheFor != 0 {
			k.cacheFor = opts.CacheFor
		}
		if opts.Now != nil {
			k.now = opts.Now
		}
	}
	// What was read longer ago than cacheFor is read again anyway.
	k.cache = lru.New[cached](maxCached, max(k.cacheFor, 0))
	return k
}

// Close releases the keyring's database or file.
func (k *Keyring) Close() error { return k.b.close() }

// A NewKey is what Add makes a key of.
type NewKey struct {
	Name    string
	Tenant  string // must pass memtool.ValidateTenant
	Scope   Scope
	Expires time.Time // zero: never
}

// Check returns the error Add would return for nk's tenant, scope or
// name, which it checks without a keyring: a program checks them before
// it opens (and perhaps creates) the store that keeps the keys.
func (nk NewKey) Check() error {
	if err := memtool.ValidateTenant(nk.Tenant); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if nk.Scope < Read || nk.Scope > Admin {
		return fmt.Errorf("keys: invalid scope %v", nk.Scope)
	}
	// unicode.IsControl covers C1 (U+0080 to U+009F) as well as C0 and
	// DEL, and format characters (Cf: bidi overrides, zero-width spaces)
	// reorder or hide what follows them: memtool keys list prints names
	// to a terminal. A name that is not UTF-8 would be kept as sent by
	// SQLite, refused by PostgreSQL, and changed by the key file's JSON.
	if len(nk.Name) > 200 || !utf8.ValidString(nk.Name) || strings.ContainsFunc(nk.Name, unprintable) {
		return fmt.Errorf("keys: a name is at most 200 bytes of UTF-8, without control or format characters")
	}
	return nil
}

// Add makes a key and returns it and its token, the only time the token
// is ever seen: the keyring keeps a hash of it.
func (k *Keyring) Add(ctx context.Context, nk NewKey) (Key, string, error) {
	if err := nk.Check(); err != nil {
		return Key{}, "", err
	}
	// Both kept to the millisecond: an expiry must be after the creation
	// as kept, or the key would be expired at birth.
	now := k.now().UTC().Truncate(time.Millisecond)
	expires := nk.Expires.UTC().Truncate(time.Millisecond)
	if !nk.Expires.IsZero() && !expires.After(now) {
		return Key{}, "", fmt.Errorf("keys: the expiry %s is not in the future", nk.Expires.Format(time.RFC3339))
	}
	for range 5 {
		id, secret := randomHex(idBytes), randomHex(secretBytes)
		sum := sha256.Sum256([]byte(secret))
		key := Key{ID: id, Name: nk.Name, Tenant: nk.Tenant, Scope: nk.Scope, Created: now, Expires: expires}
		err := k.b.insert(ctx, record{key, sum[:]})
		if errors.Is(err, errIDTaken) {
			continue
		}
		if err != nil {
			return Key{}, "", fmt.Errorf("keys: add: %w", err)
		}
		return key, tokenPrefix + id + "_" + secret, nil
	}
	return Key{}, "", fmt.Errorf("keys: add: no free key id")
}

// List returns every key, revoked and expired ones included, by creation
// time (then id). Stored records that are no valid key are left out, and
// named by an error wrapping ErrMalformed, returned with the other keys.
func (k *Keyring) List(ctx context.Context) ([]Key, error) {
	recs, err := k.b.list(ctx)
	if err != nil && !errors.Is(err, ErrMalformed) {
		return nil, fmt.Errorf("keys: list: %w", err)
	}
	if err != nil {
		err = fmt.Errorf("keys: list: %w", err)
	}
	out := make([]Key, len(recs))
	for i, r := range recs {
		out[i] = r.Key
	}
	return out, err
}

// Revoke revokes the key id for good. Revoking a revoked key is no
// error; an unknown id is ErrNotFound.
func (k *Keyring) Revoke(ctx context.Context, id string) error {
	if err := k.b.revoke(ctx, id, k.now().UTC().Truncate(time.Millisecond)); err != nil {
		return fmt.Errorf("keys: revoke %s: %w", id, err)
	}
	k.forget(id)
	return nil
}

// forget drops what the cache holds of the key id, just revoked.
func (k *Keyring) forget(id string) {
	k.mu.Lock()
	k.revoked++
	k.cache.Remove(id, func(cached) bool { return true })
	k.mu.Unlock()
}

// Verify returns the key a token belongs to, if it may be used now. A
// token that opens nothing is an error wrapping ErrInvalidToken; any
// other error is the keyring's failure. What Verify read of a key is
// trusted for Options.CacheFor.
func (k *Keyring) Verify(ctx context.Context, token string) (Key, error) {
	id, secret, ok := parseToken(token)
	if !ok {
		return Key{}, fmt.Errorf("%w: malformed", ErrInvalidToken)
	}
	now := k.now()
	k.mu.Lock()
	c, hit := k.cache.Get(id, now)
	revoked := k.revoked
	k.mu.Unlock()
	if !hit || k.cacheFor < 0 || now.Sub(c.read) >= k.cacheFor || now.Before(c.read) {
		rec, err := k.b.get(ctx, id)
		switch {
		case err == nil:
			c = cached{rec: rec, found: true, read: now}
		case errors.Is(err, ErrNotFound):
			c = cached{read: now}
		default:
			return Key{}, fmt.Errorf("keys: verify: %w", err)
		}
		k.mu.Lock()
		if k.revoked == revoked {
			k.cache.Put(id, c, now)
			k.cache.Evict(now, func(cached) bool { return true })
		}
		k.mu.Unlock()
	}
	sum := sha256.Sum256([]byte(secret))
	if !c.found || subtle.ConstantTimeCompare(sum[:], c.rec.hash) != 1 {
		return Key{}, fmt.Errorf("%w: unknown key or wrong secret", ErrInvalidToken)
	}
	if err := c.rec.Usable(now); err != nil {
		return Key{}, err
	}
	return c.rec.Key, nil
}

// maxCached bounds the cache: a flood of made-up ids cannot grow it
// without end, and drops the least recently used keys first, so that the
// keys in use stay cached through it. A variable for tests.
var maxCached = 100000

// A token is tokenPrefix, the key id (idBytes random bytes in hex), "_"
// and the secret (secretBytes random bytes in hex).
const (
	tokenPrefix = "mt_"
	idBytes     = 8
	secretBytes = 32
)

func parseToken(token string) (id, secret string, ok bool) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", "", false
	}
	id, secret, ok = strings.Cut(rest, "_")
	if !ok || !isHex(id, idBytes) || !isHex(secret, secretBytes) {
		return "", "", false
	}
	return id, secret, true
}

// ValidID reports whether id has the form of a key id.
func ValidID(id string) bool { return isHex(id, idBytes) }

func isHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// millis and fromMillis store times as Unix milliseconds, 0 for none.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// unprintable reports whether r would not show as itself in a listing: a
// control or a format character.
func unprintable(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }
