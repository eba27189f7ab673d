package storeurl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/storeurl"
)

// TestOpenInvalidTenant: a tenant id no store can have fails Open as an
// invalid id, quoted, with Create or without, and the store is not opened
// or made. Without Create it once failed as a tenant the store lacks,
// echoing the id as it was (a newline in it split the message).
func TestOpenInvalidTenant(t *testing.T) {
	dir := t.TempDir()
	for _, url := range []string{dir, "sqlite://" + filepath.Join(dir, "m.db"), "mem+blob://"} {
		for _, id := range []string{"a\nforged line", "../x", "A"} {
			for _, create := range []bool{false, true} {
				_, closer, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: id, Create: create})
				if err == nil {
					closer.Close()
					t.Errorf("Open(%q, tenant %q, create %v) worked", url, id, create)
					continue
				}
				if !strings.Contains(err.Error(), "invalid tenant id") || strings.Contains(err.Error(), "\n") {
					t.Errorf("Open(%q, tenant %q, create %v): %v; want an invalid tenant id, on one line", url, id, create, err)
				}
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("Open with an invalid tenant left %v", entries)
	}
}
