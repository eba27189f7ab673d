//go:build !azure

package objectstore_test

import "testing"

// TestAzureNotBuilt: without -tags azure, azblob:// URLs are refused with
// ErrNotBuilt and a text that says how to build with them.
func TestAzureNotBuilt(t *testing.T) {
	testNotBuilt(t, "azblob://container?prefix=p", "memtool was built without Azure Blob Storage; rebuild with -tags azure")
}
