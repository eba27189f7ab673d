//go:build !azure

package objectstore

// Azure Blob Storage is left out of this build: Open refuses azblob://
// URLs with ErrNotBuilt. Build with -tags azure to add it.
const azureScheme, hasAzure = "azblob", false
