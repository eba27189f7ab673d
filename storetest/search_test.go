package storetest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

// The search suite runs here on the stores that have no index (the
// indexed ones run it in their own packages) and on an encrypted store.

func TestSearchMemstore(t *testing.T) {
	storetest.RunSearch(t, func(*testing.T) memtool.Store { return memstore.New() })
}

func TestSearchFilestore(t *testing.T) {
	storetest.RunSearch(t, func(t *testing.T) memtool.Store {
		s, err := filestore.Open(t.TempDir(), nil)
		return storetest.Opened(t, s, err)
	})
}

func TestSearchObjectstore(t *testing.T) {
	t.Run("memblob", func(t *testing.T) {
		storetest.RunSearch(t, func(t *testing.T) memtool.Store {
			s, err := objectstore.Open(context.Background(), "mem+blob://")
			return storetest.Opened(t, s, err)
		})
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t, nil)
		n := 0
		storetest.RunSearch(t, func(t *testing.T) memtool.Store {
			n++
			name := "bucket-" + string(rune('a'+n))
			srv.CreateBucket(t, name)
			s, err := objectstore.NewS3(srv.Client(), &objectstore.Options{S3Bucket: name})
			return storetest.Opened(t, s, err)
		})
	})
}

func TestSearchEncrypted(t *testing.T) {
	storetest.RunSearch(t, func(t *testing.T) memtool.Store { return backendtest.Encrypted(t, memstore.New()) })
}

// TestSearchEncryptedNeverIndexed: an encrypted store over an indexed one
// is searched by decrypting each file, and the index holds only the
// ciphertext: the plaintext is nowhere in the database's files.
func TestSearchEncryptedNeverIndexed(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlitestore.Open(filepath.Join(dir, "m.db"), nil)
	db = storetest.Opened(t, db, err)
	s := backendtest.Encrypted(t, db)
	if memtool.Has[memtool.Searcher](s) {
		t.Fatal("the encrypted store claims the index of the store it wraps")
	}
	const secret = "zanzibar-quokka"
	if err := s.WriteFile(t.Context(), "f.md", []byte("line one\nthe "+secret+" plan\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	r, err := memtool.Search(t.Context(), s, memtool.SearchQuery{Query: "QUOKKA"}, 0)
	if err != nil || r.Total != 1 || r.Matches[0].Line != 2 {
		t.Fatalf("Search: %+v, %v; want line 2", r, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "m.db*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("quokka")) {
			t.Errorf("%s holds the plaintext", filepath.Base(f))
		}
	}
}

// The policies that read files as they are (limits, secrets, expiry)
// forward the index of the store they wrap; those that change what a
// read returns or record it (encrypt, history, audit) do not, and are
// scanned. Either way they find what a plain reading finds.
func TestSearchPolicies(t *testing.T) {
	var auditLog bytes.Buffer
	for _, p := range []struct {
		name    string
		wrap    func(memtool.Store) memtool.Store
		indexed bool
	}{
		{"limits", func(s memtool.Store) memtool.Store { return limits.New(s, nil) }, true},
		{"secrets", func(s memtool.Store) memtool.Store { return secrets.New(s, nil) }, true},
		{"expiry", func(s memtool.Store) memtool.Store { return expiry.New(s, nil) }, true},
		{"history", func(s memtool.Store) memtool.Store { return history.New(s, nil) }, false},
		{"audit", func(s memtool.Store) memtool.Store { return audit.New(s, &auditLog, nil) }, false},
	} {
		t.Run(p.name, func(t *testing.T) {
			storetest.RunSearch(t, func(t *testing.T) memtool.Store {
				db, err := sqlitestore.Open(filepath.Join(t.TempDir(), "m.db"), nil)
				s := p.wrap(storetest.Opened(t, db, err))
				if got := memtool.Has[memtool.Searcher](s); got != p.indexed {
					t.Fatalf("Has[Searcher] = %v, want %v", got, p.indexed)
				}
				return s
			})
		})
	}
}
