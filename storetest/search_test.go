package storetest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/memblob"
	"gocloud.dev/blob/s3blob"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
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
			s, err := objectstore.New(memblob.OpenBucket(nil), nil)
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
			b, err := s3blob.OpenBucket(context.Background(), srv.Client(), name, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := objectstore.New(b, &objectstore.Options{S3Bucket: name})
			return storetest.Opened(t, s, err)
		})
	})
}

func newEncrypted(t *testing.T, inner memtool.Store) memtool.Store {
	t.Helper()
	k, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := encrypt.New(inner, []encrypt.Key{k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSearchEncrypted(t *testing.T) {
	storetest.RunSearch(t, func(t *testing.T) memtool.Store { return newEncrypted(t, memstore.New()) })
}

// TestSearchEncryptedNeverIndexed: an encrypted store over an indexed one
// is searched by decrypting each file, and the index holds only the
// ciphertext: the plaintext is nowhere in the database's files.
func TestSearchEncryptedNeverIndexed(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlitestore.Open(filepath.Join(dir, "m.db"), nil)
	db = storetest.Opened(t, db, err)
	s := newEncrypted(t, db)
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
