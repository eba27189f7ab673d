package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/sqlitestore"
)

var osGetenv = os.Getenv

// defaultStore is used when neither --store nor $MEMTOOL_STORE is given.
const defaultStore = "./memories"

// storeURL picks the store: the flag, else $MEMTOOL_STORE, else ./memories.
func storeURL(flagValue string, env *cliEnv) string {
	if flagValue != "" {
		return flagValue
	}
	if v := env.getenv("MEMTOOL_STORE"); v != "" {
		return v
	}
	return defaultStore
}

// openStore opens a store from its URL, as the memory of tenant (or the
// tenant-less store if tenant is ""). Every command opens its stores here.
// With create false (the commands that only read: view, history, info,
// migrate's source...) a store that is not there is an error rather than
// a new, empty one; the backends that cannot tell cheaply are opened as
// they are. The returned closer releases the store. Its errors never show
// a password or token of the URL (see redact).
func openStore(ctx context.Context, raw, tenant string, create bool) (memtool.Store, io.Closer, error) {
	if raw == "mem:" && tenant != "" {
		return nil, nil, fmt.Errorf("store URL %q: mem: has no tenants", raw)
	}
	s, closer, err := openBackend(ctx, raw, create)
	if err == nil {
		if s, closer, err = scopeTenant(ctx, s, closer, tenant); err == nil {
			return s, closer, nil
		}
	}
	return nil, nil, redactedError{err, raw}
}

// openBackend opens the store at a URL as a whole: not scoped to a tenant,
// its tenancy not checked. The registry of schemes is written out here,
// explicitly.
func openBackend(ctx context.Context, raw string, create bool) (memtool.Store, io.Closer, error) {
	if !create {
		if err := checkExists(raw); err != nil {
			return nil, nil, err
		}
	}
	scheme, rest, hasScheme := strings.Cut(raw, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/.") {
		// A plain path (a one-letter "scheme" would be a Windows drive).
		return openFileStore(raw)
	}
	switch scheme {
	case "helper": // a directory written by the Python or TypeScript SDK's memory helper
		if rest == "" {
			return nil, nil, fmt.Errorf("store URL %q: give the helper's base directory, as in helper:./memory", raw)
		}
		if create {
			if err := os.MkdirAll(claude.HelperDir(rest), 0o700); err != nil {
				return nil, nil, err
			}
		}
		return openFileStore(claude.HelperDir(rest))
	case "mem":
		if rest != "" {
			return nil, nil, fmt.Errorf("store URL %q: mem: takes nothing after the colon", raw)
		}
		return memstore.New(), nopCloser{}, nil
	case "sqlite":
		u, err := url.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("store URL %q: %v", raw, err)
		}
		if u.Host != "" || !filepath.IsAbs(u.Path) || u.RawQuery != "" {
			return nil, nil, fmt.Errorf("store URL %q: an SQLite URL needs an absolute path, as in sqlite:///abs/path.db", raw)
		}
		s, err := sqlitestore.Open(u.Path, nil)
		if err != nil {
			return nil, nil, err
		}
		return s, s, nil
	case "postgres", "postgresql":
		s, err := pgstore.Open(ctx, raw, nil)
		if err != nil {
			return nil, nil, err
		}
		return s, s, nil
	case "s3", "gs", "azblob", "mem+blob", "file+blob":
		s, err := objectstore.Open(ctx, raw)
		if err != nil {
			return nil, nil, err
		}
		return s, s, nil
	case "file":
		u, err := url.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("store URL %q: %v", raw, err)
		}
		if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
			return nil, nil, fmt.Errorf("store URL %q: a file URL needs an absolute path, as in file:///abs/dir", raw)
		}
		return openFileStore(u.Path)
	}
	return nil, nil, fmt.Errorf("store URL %q: unknown scheme %q (known: file, helper, mem, sqlite, postgres, s3, gs, azblob, mem+blob, file+blob, or a plain directory path)", raw, scheme)
}

func openFileStore(dir string) (memtool.Store, io.Closer, error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("store: empty directory path")
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}

// checkExists refuses a store on the local disk that is not there, which
// opening it would create empty. The stores elsewhere are not checked.
func checkExists(raw string) error {
	local := raw
	if scheme, rest, ok := strings.Cut(raw, ":"); ok && len(scheme) >= 2 && !strings.ContainsAny(scheme, "/.") {
		switch scheme {
		case "file", "sqlite", "file+blob":
			u, err := url.Parse(raw)
			if err != nil || u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
				return nil // opening it says what is wrong
			}
			local = u.Path
		case "helper":
			if rest == "" {
				return nil // opening it says what is wrong
			}
			local = claude.HelperDir(rest)
		default:
			return nil
		}
	}
	if local == "" {
		return nil
	}
	if _, err := os.Stat(local); err != nil {
		return fmt.Errorf("store %s does not exist (this command does not create one; check --store or $MEMTOOL_STORE)", raw)
	}
	return nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// # Secrets in store URLs
//
// A database or bucket URL may hold a password or a token, and memtool's
// messages quote store URLs (errors, summaries, banners) and the errors of
// the drivers that open them. Every such message goes through redact.

// masked replaces a secret in a message.
const masked = "xxxxx"

// secretKey matches, in a query string or a key=value connection string,
// a parameter that carries a credential: password, sslpassword, token,
// secret and access keys, and the signatures and credentials of signed
// URLs. The value runs to the next separator or is quoted with '.
var secretKey = regexp.MustCompile(`(?i)((?:^|[^a-z0-9])[a-z0-9_.-]*(?:password|passwd|pwd|token|secret|access[_-]?key|api[_-]?key|credentials?|signature|sig|sas)(?:[_-]?(?:key|id|token))*\s*=\s*)('[^']*'|[^\s&;'"]+)`)

// userinfo matches the password of a URL's userinfo: scheme://user:PASSWORD@.
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/?#\s:@]*:)([^/?#\s]*)@`)

// redact returns s with the secrets it holds masked: the password of every
// URL's userinfo, the values of credential parameters (secretKey), and,
// wherever they occur, the secrets of the given store URLs (so that a
// driver's error that quotes a password outside of any URL, or decoded,
// is masked too; secrets shorter than 4 bytes are masked only in those
// URL and key=value forms, lest every "ab" of a message go).
func redact(s string, urls ...string) string {
	for _, u := range urls {
		for _, secret := range urlSecrets(u) {
			if len(secret) >= 4 {
				s = strings.ReplaceAll(s, secret, masked)
			}
		}
	}
	s = userinfo.ReplaceAllString(s, "${1}"+masked+"@")
	return secretKey.ReplaceAllString(s, "${1}"+masked)
}

// urlSecrets returns the secrets of a store URL as they are written in it
// and decoded: the userinfo password and the credential parameters' values.
func urlSecrets(raw string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	for _, m := range userinfo.FindAllStringSubmatch(raw, -1) {
		add(m[2])
	}
	for _, m := range secretKey.FindAllStringSubmatch(raw, -1) {
		add(strings.Trim(m[2], "'"))
	}
	return out
}

// redactedError is an error of opening the store at url, shown with its
// secrets masked; errors.Is and As still see the error itself.
type redactedError struct {
	err error
	url string
}

func (e redactedError) Error() string { return redact(e.err.Error(), e.url) }
func (e redactedError) Unwrap() error { return e.err }

// redactingWriter masks secrets (see redact) in what is written through
// it, one Write at a time: for messages, such as the log lines of a
// slog handler, each written whole.
type redactingWriter struct {
	w    io.Writer
	urls []string
}

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, redact(string(p), r.urls...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
