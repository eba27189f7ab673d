//go:build azure

package objectstore_test

import "testing"

// TestAzureBuilt: with -tags azure, Open opens azblob:// URLs (with a
// shared key for an address that opening does not contact).
func TestAzureBuilt(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "memtool")
	t.Setenv("AZURE_STORAGE_KEY", "bWVtdG9vbA==")
	testBuilt(t, "azblob://container?prefix=p&protocol=http&domain=127.0.0.1:1")
}
