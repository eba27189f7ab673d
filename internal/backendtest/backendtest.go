// Package backendtest lists every store backend available here, so that a
// test can run on all of them: adding a backend to the tests is adding one
// row to the table in this file.
//
// A backend that needs a server (PostgreSQL) is skipped with a message
// when the server is not configured, and fails the test when $CI is set
// (the rule of package pgtest).
package backendtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/objectstore/s3test"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
	"github.com/memtool/memtool/storeurl"
)

// A Backend is one kind of store.
type Backend struct {
	Name string

	// URL returns the store URL (storeurl's forms) of a new, empty store
	// that is gone when t ends.
	URL func(t testing.TB) string

	// Shared: the URL names a store that other processes can open too
	// (tests that run the memtool binary need one).
	Shared bool
	// Object: an object store (package objectstore).
	Object bool
	// wrap, if set, stacks a policy over the store the URL opens.
	wrap func(t testing.TB, s memtool.Store) memtool.Store
}

// all is every backend: the stores of this module, each once, and one
// policy stack.
var all = []Backend{
	{Name: "memstore", URL: constant("mem:")},
	{Name: "filestore", URL: func(t testing.TB) string { return filepath.Join(t.TempDir(), "memories") }, Shared: true},
	{Name: "sqlite", URL: func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "memory.db") }, Shared: true},
	{Name: "postgres", URL: pgtest.URL, Shared: true},
	{Name: "objectstore", URL: constant("mem+blob://"), Object: true},
	{Name: "s3", URL: func(t testing.TB) string { return S3URL(t, "team/memory") }, Shared: true, Object: true},
	{Name: "encrypted", URL: constant("mem:"), wrap: Encrypted},
}

// All returns every backend available here.
func All() []Backend { return append([]Backend(nil), all...) }

// Local returns the two backends a policy's own tests wrap: memstore (in
// memory) and filestore (in a directory).
func Local() []Backend {
	var local []Backend
	for _, b := range all {
		if b.Name == "memstore" || b.Name == "filestore" {
			local = append(local, b)
		}
	}
	return local
}

// Open opens a new, empty store of the backend, closed when t ends.
func (b Backend) Open(t testing.TB) memtool.Store {
	t.Helper()
	s, closer, err := storeurl.Open(context.Background(), b.URL(t), &storeurl.Options{Create: true})
	if err != nil {
		t.Fatalf("%s: %v", b.Name, err)
	}
	t.Cleanup(func() { closer.Close() })
	if b.wrap != nil {
		s = b.wrap(t, s)
	}
	return s
}

// FileStore opens a new, empty directory store, closed when t ends: for
// the tests of the policies, which wrap one.
func FileStore(t testing.TB) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "memories"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// OnLocal runs fn in a subtest for each of the Local backends, on a new,
// empty store of it.
func OnLocal(t *testing.T, fn func(t *testing.T, inner memtool.Store)) {
	for _, b := range Local() {
		t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t)) })
	}
}

// RunWrapper runs storetest's wrapper suite on the policy wrap over a new
// directory store (FileStore) for each check.
func RunWrapper(t *testing.T, wrap func(t *testing.T, inner memtool.Store) memtool.Store, refusals []storetest.Refusal) {
	t.Helper()
	storetest.RunWrapper(t, func(t *testing.T) memtool.Store { return FileStore(t) }, wrap, refusals)
}

// S3URL starts an S3-compatible server (package s3test) with one bucket,
// memories, and returns the store URL of that bucket under prefix. The
// credentials are in the environment, as they would be for S3: for the
// whole test process if its TestMain called SetS3Env, and otherwise set
// by S3URL until t ends, when t must not be parallel.
func S3URL(t testing.TB, prefix string) string {
	t.Helper()
	srv := s3test.Start(t, nil)
	srv.CreateBucket(t, "memories")
	if !s3EnvSet() {
		for _, kv := range s3Env {
			t.Setenv(kv[0], kv[1])
		}
	}
	return fmt.Sprintf("s3://memories?region=us-east-1&endpoint=%s&use_path_style=true&prefix=%s", srv.URL, prefix)
}

// s3Env is the environment of a client of the S3 test server: its
// credentials, and no AWS configuration or instance metadata to consult.
var s3Env = [][2]string{
	{"AWS_ACCESS_KEY_ID", "test"},
	{"AWS_SECRET_ACCESS_KEY", "test"},
	{"AWS_CONFIG_FILE", os.DevNull},
	{"AWS_SHARED_CREDENTIALS_FILE", os.DevNull},
	{"AWS_EC2_METADATA_DISABLED", "true"},
}

// SetS3Env sets the environment of S3URL's stores for the whole test
// process, for good: a package calls it from TestMain when its tests on S3
// run in parallel, or start memtool processes that must inherit it. Such a
// package cannot test what memtool does without AWS credentials.
func SetS3Env() error {
	for _, kv := range s3Env {
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

func s3EnvSet() bool {
	for _, kv := range s3Env {
		if os.Getenv(kv[0]) != kv[1] {
			return false
		}
	}
	return true
}

func constant(url string) func(testing.TB) string {
	return func(testing.TB) string { return url }
}

// Encrypted returns an encrypt store over s, with a new key.
func Encrypted(t testing.TB, s memtool.Store) memtool.Store {
	key, err := encrypt.NewKey("")
	if err != nil {
		t.Fatal(err)
	}
	e, err := encrypt.New(s, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// OnDisk runs fn, in a subtest each, on a new store of every backend that
// keeps what it is given in files on this machine's disk: a directory
// (filestore) and SQLite.
func OnDisk(t *testing.T, fn func(t *testing.T, inner memtool.Store)) {
	for _, b := range All() {
		if b.Name == "filestore" || b.Name == "sqlite" {
			t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t)) })
		}
	}
}
