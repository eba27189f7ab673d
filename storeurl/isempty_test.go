package storeurl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storeurl"
)

// TestIsEmptyClaimsNothing: asking whether an unused store is empty
// answers yes and leaves it unused, so that it can then be used with
// tenants. IsEmpty once read the tenant-less memory of a store that
// exists but has never been used (an SQLite file made empty, a bucket
// prefix, a PostgreSQL schema), which claimed it single-tenant for good:
// every tenant's open failed after.
func TestIsEmptyClaimsNothing(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bucket := filepath.Join(tmp, "bucket")
	if err := os.Mkdir(bucket, 0o700); err != nil {
		t.Fatal(err)
	}
	urls := []string{"sqlite://" + empty, "file+blob://" + bucket, backendtest.S3URL(t, "new")}
	if os.Getenv(pgtest.EnvVar) != "" {
		urls = append(urls, pgtest.URL(t))
	}
	for _, url := range urls {
		if got, err := storeurl.IsEmpty(t.Context(), url, ""); !got || err != nil {
			t.Errorf("IsEmpty(%s) of an unused store = %v, %v", url, got, err)
		}
		s, closer, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: "alice", Create: true})
		if err != nil {
			t.Errorf("after IsEmpty(%s), a tenant's Open: %v", url, err)
			continue
		}
		if _, err := s.ReadDir(t.Context(), ""); err != nil {
			t.Errorf("%s: tenant alice: %v", url, err)
		}
		closer.Close()
		if got, err := storeurl.IsEmpty(t.Context(), url, ""); !got || err != nil {
			t.Errorf("IsEmpty(%s) of a store whose one tenant holds nothing = %v, %v", url, got, err)
		}
	}
}
