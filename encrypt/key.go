package encrypt

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// MaxKeyIDLen is the longest key ID, in bytes.
const MaxKeyIDLen = 16

// A Key is a 256-bit master key and its ID, which every file it encrypts
// names, so that keys can be rotated.
type Key struct {
	ID     string
	secret [32]byte
}

// NewKey returns a new random key. An empty id gets a random one.
func NewKey(id string) (Key, error) {
	var k Key
	if id == "" {
		var b [4]byte
		rand.Read(b[:])
		id = "k" + hex.EncodeToString(b[:])
	}
	if err := validKeyID(id); err != nil {
		return Key{}, err
	}
	k.ID = id
	rand.Read(k.secret[:])
	return k, nil
}

// Text is the key's text form, "ID:base64", as ParseKeys reads it and a
// key file holds it: the secret itself.
func (k Key) Text() string {
	return k.ID + ":" + base64.StdEncoding.EncodeToString(k.secret[:])
}

// String names the key without its secret ("ID:[secret]"), so that a key
// printed by mistake (%v, %s, a log line) does not give it away; Text is
// the key itself.
func (k Key) String() string { return k.ID + ":[secret]" }

// GoString is String, for %#v.
func (k Key) GoString() string { return k.String() }

// Format prints String for every verb: %d or %x of a Key would otherwise
// print the secret's bytes.
func (k Key) Format(f fmt.State, verb rune) { io.WriteString(f, k.String()) }

// validKeyID checks a key's ID. Its error does not quote an ID it
// refuses: a key written the wrong way round (base64:ID) has its secret
// where the ID goes.
func validKeyID(id string) error {
	if id == "" || len(id) > MaxKeyIDLen {
		return fmt.Errorf("encrypt: a key ID of %d bytes: want 1 to %d (a key reads ID:base64)", len(id), MaxKeyIDLen)
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return errors.New("encrypt: a key ID holds only letters, digits, '-', '_' and '.' (a key reads ID:base64)")
		}
	}
	return nil
}

// ParseKeys reads keys in their text form, "ID:base64" (32 bytes of key,
// not all zero), separated by newlines, spaces or commas; '#' starts a
// comment to the end of the line. The first key is the one that encrypts.
func ParseKeys(text string) ([]Key, error) {
	var keys []Key
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, field := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			id, b64, ok := strings.Cut(field, ":")
			if !ok {
				return nil, fmt.Errorf("encrypt: a key must read ID:base64 (see memtool keygen)")
			}
			if err := validKeyID(id); err != nil {
				return nil, err
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(raw) != 32 {
				return nil, fmt.Errorf("encrypt: key %q: want 32 bytes in standard base64", id)
			}
			k := Key{ID: id}
			copy(k.secret[:], raw)
			if k.secret == [32]byte{} {
				return nil, fmt.Errorf("encrypt: key %q is all zeros, which keeps nothing secret; make a key with memtool keygen", id)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("encrypt: no key found")
	}
	return keys, nil
}

// LoadKeys reads keys from the environment variable env (the keys
// themselves) if it is set, else from the file it names in envFile (set
// by the caller, e.g. MEMTOOL_KEY_FILE). The file must not be readable by
// others. An error names the file, but for a name with a ':' in it, as
// keys have (the two variables swapped): it names envFile instead, so as
// never to repeat a key.
func LoadKeys(getenv func(string) string, env, envFile string) ([]Key, error) {
	if v := getenv(env); v != "" {
		return ParseKeys(v)
	}
	name := getenv(envFile)
	if name == "" {
		return nil, fmt.Errorf("encrypt: set %s to the keys or %s to a key file (make one with memtool keygen)", env, envFile)
	}
	shown := name
	if strings.Contains(name, ":") {
		shown = fmt.Sprintf("named by %s (its value has a ':', as keys do: the keys themselves go in %s)", envFile, env)
	}
	// The mode checked is that of the file open, not of the name, which
	// could be replaced between a check and a read.
	f, err := os.Open(name)
	if err != nil {
		return nil, keyFileError(shown, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, keyFileError(shown, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("encrypt: key file %s is readable by others (mode %v); chmod 600 it", shown, fi.Mode().Perm())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, keyFileError(shown, err)
	}
	return ParseKeys(string(data))
}

// keyFileError is err of the key file shown, without the file's name that
// an *fs.PathError holds: shown is how the file may be named.
func keyFileError(shown string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("encrypt: key file %s: %s: %w", shown, pe.Op, pe.Err)
	}
	return fmt.Errorf("encrypt: key file %s: %w", shown, err)
}
