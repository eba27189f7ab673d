// Package pgtest gives tests a PostgreSQL database of their own.
//
// The server comes from $MEMTOOL_TEST_POSTGRES, a postgres:// URL (the
// repository's .ci/postgres.sh starts a local server and prints one).
// Without it, or when the server cannot be reached, a test fails if $CI is
// set and is skipped with a message otherwise.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the environment variable that holds the server's URL.
const EnvVar = "MEMTOOL_TEST_POSTGRES"

// URL returns the URL of a new, empty schema on the test server, which is
// dropped when t ends: the URL's search_path names it, so each test has its
// own tables.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvVar)
	if base == "" {
		Unavailable(t, "$"+EnvVar+" is not set (run .ci/postgres.sh to get a local database)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		Unavailable(t, "cannot reach the server in $"+EnvVar+": "+err.Error())
	}
	defer conn.Close(ctx)
	b := make([]byte, 8)
	rand.Read(b)
	schema := "memtool_test_" + hex.EncodeToString(b)
	// The search index's extension, once per database, in public: made
	// by a store in its test schema, it would go when that schema is
	// dropped, and every other test's index with it. (Two tests making it
	// at once may fail; one of them makes it.)
	conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Unavailable stops t for want of something the test needs (the server,
// root, a tool): it fails t when $CI is set and skips it otherwise.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("this test must run under CI: %s", why)
	}
	t.Skipf("skipping: %s", why)
}
