//go:build azure

package objectstore

import "gocloud.dev/blob/azureblob"

// Azure Blob Storage is in this build. Open opens azblob:// URLs with
// gocloud's default URL mux, where importing azureblob registered its
// opener (gocloud exports no other way to its lazy credentials).
const azureScheme, hasAzure = azureblob.Scheme, true
