// Package storeurl turns store URLs (memtool's --store) into stores: it is
// the one registry of URL schemes, used by the CLI, migrate and servers.
//
// Open opens the memory at a URL, Tenants lists the tenants of a
// multi-tenant store, IsEmpty says whether a target holds anything,
// Schemes lists the forms a URL may take, for help text, and LeftOut the
// schemes this build cannot open (gs and azblob without -tags
// gcs,azure). Every error they return has the URL's secrets masked (see
// Redact), and one about reaching a database or a bucket says what to
// check (host and port, region, endpoint, credentials, schema).
//
// # Adding a scheme
//
// The schemes are the rows of one table, registry, in storeurl.go: there
// is no init-time registration. A store package redisstore would be added
// by one row:
//
//	{names: []string{"redis"}, form: "redis://host:6379/0", about: "a Redis database", open: func(ctx context.Context, t target) (memtool.Store, io.Closer, error) {
//		s, err := redisstore.Open(ctx, t.raw)
//		return s, s, err
//	}},
//
// A row whose URLs name a file or directory on this machine also sets
// local, which Open uses to refuse a missing target (unless
// Options.Create) and to create an SQLite file's folder; an empty file or
// another program's database is refused by sqlitestore's Existing.
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/durable"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/sqlitestore"
)

// Options are how Open opens a store. The zero value (or nil) opens the
// tenant-less memory of a store that exists.
type Options struct {
	// Tenant, if set, opens that tenant's memory of a multi-tenant store.
	// An id memtool.ValidateTenant refuses fails Open with its error,
	// before the store is opened or made.
	Tenant string

	// Create lets Open create a local target that is missing: a directory
	// store's directory, an SQLite file and its folder, a file+blob
	// directory; make an empty file, or another program's SQLite
	// database, a store; and create a PostgreSQL database's tables.
	// Without it, a missing target, an empty file or a database without
	// memtool's tables fails with an error wrapping fs.ErrNotExist, never
	// opening as an empty memory, and is left as it is; so does a Tenant
	// the store does not list (a MissingTenantError): it is not claimed.
	Create bool
}

// target is a parsed store URL.
type target struct {
	raw    string // the URL as given
	path   string // the local file or directory, "" if none
	create bool   // Options.Create: a store that is not there may be made
}

// kind is what a row's local path is.
type kind int

const (
	remote kind = iota // no local path
	dir                // a directory, created by the store on open
	file               // a file, whose folder Open creates
)

// scheme is one row of the registry.
type scheme struct {
	names []string // the URL schemes, the first one shown in messages
	form  string   // how a URL of it is written, for help text
	about string   // what the store is, for people (Kind)
	local kind
	// inMemory: the store lives in the process that opens it, and each
	// open is a new, empty one (InMemory).
	inMemory bool
	// server: the store is a memtool server's, reached over HTTP.
	server bool
	// parse checks the URL and returns the local path (for dir and file
	// rows). nil: any URL of the scheme is handed to open as it is.
	parse func(row scheme, raw string) (string, error)
	// open opens the tenant-less store.
	open func(ctx context.Context, t target) (memtool.Store, io.Closer, error)
}

// registry is every store URL scheme, in the order help text shows them.
// A plain path (no scheme) is a directory store, as file: is.
var registry = []scheme{
	{names: []string{"file"}, form: "file:///abs/dir", about: "a directory", local: dir, parse: absPath, open: openDir},
	{names: []string{"helper"}, form: "helper:DIR", about: "a directory of the SDK memory helper", local: dir, parse: helperDir, open: openDir},
	{names: []string{"mem"}, form: "mem:", about: "in memory, gone when the process exits", inMemory: true, parse: noRest, open: func(context.Context, target) (memtool.Store, io.Closer, error) {
		return memstore.New(), nopCloser{}, nil
	}},
	{names: []string{"sqlite"}, form: "sqlite:///abs/path.db", about: "an SQLite file", local: file, parse: absPath, open: func(_ context.Context, t target) (memtool.Store, io.Closer, error) {
		// A read writes nothing to a file that is not a store yet.
		s, err := sqlitestore.Open(t.path, &sqlitestore.Options{Existing: !t.create})
		return s, s, err
	}},
	{names: []string{"postgres", "postgresql"}, form: "postgres://user@host:5432/db?search_path=schema", about: "a PostgreSQL database", open: func(ctx context.Context, t target) (memtool.Store, io.Closer, error) {
		// A read makes no tables, as it makes no local store.
		s, err := pgstore.Open(ctx, t.raw, &pgstore.Options{Existing: !t.create})
		return s, s, err
	}},
	{names: []string{"s3"}, form: "s3://bucket?region=…&prefix=…", about: "object storage (S3)", open: openObjects},
	{names: []string{"gs"}, form: "gs://bucket?prefix=…", about: "object storage (Google Cloud Storage)", open: openObjects},
	{names: []string{"azblob"}, form: "azblob://container?prefix=…", about: "object storage (Azure Blob Storage)", open: openObjects},
	{names: []string{"mem+blob"}, form: "mem+blob://", about: "object storage in memory, gone when the process exits", inMemory: true, open: openObjects},
	{names: []string{"file+blob"}, form: "file+blob:///abs/dir", about: "object storage in a directory", local: dir, parse: absPath, open: func(ctx context.Context, t target) (memtool.Store, io.Closer, error) {
		// With ~ expanded, as objectstore.Open reads the path itself.
		u, _ := url.Parse(t.raw) // parsed by absPath already
		t.raw = (&url.URL{Scheme: u.Scheme, Path: t.path, RawQuery: u.RawQuery}).String()
		return openObjects(ctx, t)
	}},
	{names: []string{"https", "http"}, form: "https://host[:port][/prefix] (a memtool server; the token in $" + remotestore.TokenEnv + ")", about: "a memtool server", server: true, open: func(_ context.Context, t target) (memtool.Store, io.Closer, error) {
		s, err := remotestore.Open(t.raw, &remotestore.Options{Token: os.Getenv(remotestore.TokenEnv)})
		return s, s, err
	}},
}

// plainPath is the row of a URL without a scheme: a directory.
var plainPath = scheme{form: "DIR", about: "a directory", local: dir, open: openDir}

// Schemes returns the forms a store URL may take, one per scheme, in the
// registry's order: for help text. A scheme this build leaves out (see
// LeftOut) says so, and how to build with it.
func Schemes() []string {
	out := []string{plainPath.form + " (a directory)"}
	for _, s := range registry {
		form := s.form
		if err := objectstore.NotBuilt(s.names[0]); err != nil {
			form += " (" + err.Error() + ")"
		}
		out = append(out, form)
	}
	return out
}

// LeftOut returns the schemes the registry names but this build cannot
// open, in the registry's order, each as "scheme: " and the error Open
// gives for it, which names the build tag that adds it. They are gs and
// azblob, unless memtool was built with -tags gcs,azure.
func LeftOut() []string {
	var out []string
	for _, s := range registry {
		if err := objectstore.NotBuilt(s.names[0]); err != nil {
			out = append(out, s.names[0]+": "+err.Error())
		}
	}
	return out
}

// Kind says what kind of store rawURL names, for people ("an SQLite
// file", "object storage (S3)"), or "unknown" for a URL Open refuses.
func Kind(rawURL string) string {
	row, _, err := parse(rawURL)
	if err != nil {
		return "unknown"
	}
	return row.about
}

// InMemory reports whether the store rawURL names lives in the memory of
// the process that opens it (mem:, mem+blob://): each open is a new,
// empty store, gone when the process exits, so nothing is kept there for
// another process, or read from there that one wrote.
func InMemory(rawURL string) bool {
	row, _, err := parse(rawURL)
	return err == nil && row.inMemory
}

// Server reports whether rawURL names a memtool server (https://…,
// http://…): its store is the server's, opened there with the server's
// keys and policies.
func Server(rawURL string) bool {
	row, _, err := parse(rawURL)
	return err == nil && row.server
}

// Dir returns the directory on this machine that holds the store rawURL
// names, for a store kept in a directory (a plain path, file:, helper:,
// file+blob:), with ~ expanded; ok is false for any other store.
func Dir(rawURL string) (path string, ok bool) {
	row, t, err := parse(rawURL)
	if err != nil || row.local != dir || t.path == "" {
		return "", false
	}
	return t.path, true
}

// Path returns the file or directory on this machine that holds the store
// rawURL names (what Dir returns, and an SQLite file), with ~ expanded; ok
// is false for a store kept elsewhere.
func Path(rawURL string) (path string, ok bool) {
	row, t, err := parse(rawURL)
	if err != nil || row.local == remote || t.path == "" {
		return "", false
	}
	return t.path, true
}

// Open opens the store at rawURL: the memory of opts.Tenant, or the
// tenant-less memory if that is "". The tenancy is checked now, so that a
// mismatch fails Open, not the first command (a tenant's store records it
// on first use; a tenant-less one, on its first change). The returned
// closer releases the store (its connection, file or lock); the memory
// must not be used after. Errors never show a secret of the URL.
func Open(ctx context.Context, rawURL string, opts *Options) (memtool.Store, io.Closer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Tenant != "" {
		// Before the store is opened, or made: no store has such a
		// tenant, and the id is quoted, whatever it holds.
		if err := memtool.ValidateTenant(o.Tenant); err != nil {
			return nil, nil, err
		}
	}
	s, closer, err := openRaw(ctx, rawURL, o.Create)
	if err == nil && !o.Create && o.Tenant != "" {
		if err = tenantExists(ctx, s, o.Tenant); err != nil {
			closer.Close()
		}
	}
	if err == nil {
		s, closer, err = scopeTenant(ctx, s, closer, o.Tenant)
	}
	if err != nil {
		return nil, nil, redactedError{withHint(err), rawURL}
	}
	return s, closer, nil
}

// IsEmpty reports whether the store at rawURL, or the memory of tenant in
// it if tenant is not "", holds nothing: a local target that does not
// exist, an empty file, or a database without memtool's tables, is empty
// (and is not created or written), an unused one is empty (and its
// tenancy is not claimed), and a store with tenants is not empty seen
// without one. Only what the store lists counts: a directory
// store's own .memtool entries (policy data included) are not seen.
func IsEmpty(ctx context.Context, rawURL, tenant string) (bool, error) {
	empty, err := isEmpty(ctx, rawURL, tenant)
	if err != nil {
		return false, redactedError{withHint(err), rawURL}
	}
	return empty, nil
}

func isEmpty(ctx context.Context, rawURL, tenant string) (bool, error) {
	s, closer, err := openRaw(ctx, rawURL, false)
	if errors.As(err, new(missingError)) || errors.Is(err, pgstore.ErrNoTables) || errors.Is(err, sqlitestore.ErrNoTables) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer closer.Close()
	tl, lists := s.(memtool.TenantLister)
	var ids []string
	if lists {
		ids, err = tl.Tenants(ctx)
		switch {
		case tenant == "" && errors.Is(err, memtool.ErrTenancy):
			// Single-tenant: its memory says.
		case err != nil:
			return false, err
		case tenant == "":
			// Unused, or multi-tenant (whose tenant-less memory cannot
			// be read): empty if no tenant holds anything.
			return len(ids) == 0, nil
		case tenant != "" && !slices.Contains(ids, tenant):
			return true, nil // asking would claim an unused store
		}
	}
	if tenant != "" {
		if s, _, err = scopeTenant(ctx, s, nopCloser{}, tenant); err != nil {
			return false, err
		}
	}
	entries, err := s.ReadDir(ctx, "")
	if err != nil {
		return false, err
	}
	return len(entries) == 0, nil
}

// openRaw opens the tenant-less store at rawURL, creating a missing local
// target only if create.
func openRaw(ctx context.Context, rawURL string, create bool) (memtool.Store, io.Closer, error) {
	row, t, err := parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	if row.local != remote {
		if t.path == "" {
			return nil, nil, fmt.Errorf("store: empty directory path")
		}
		_, err := os.Stat(t.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !create:
			return nil, nil, missingError{rawURL}
		case errors.Is(err, fs.ErrNotExist) && row.local == file:
			// As a directory store creates its directory: durably, lest
			// a power loss take the folder, and the database, away.
			if err := mkdirAll(filepath.Dir(t.path), 0o700); err != nil {
				return nil, nil, err
			}
		}
	}
	t.create = create
	return row.open(ctx, t)
}

// mkdirAll makes the folders of a new SQLite file; a test watches it.
var mkdirAll = durable.MkdirAll

func openDir(_ context.Context, t target) (memtool.Store, io.Closer, error) {
	s, err := filestore.Open(t.path, nil)
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}

func openObjects(ctx context.Context, t target) (memtool.Store, io.Closer, error) {
	s, err := objectstore.Open(ctx, t.raw)
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}

// missingError: a local target that Open was not to create is missing.
type missingError struct{ url string }

func (e missingError) Error() string { return "store " + e.url + " does not exist" }

func (e missingError) Is(target error) bool { return target == fs.ErrNotExist }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
