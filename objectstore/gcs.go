//go:build gcs

package objectstore

import "gocloud.dev/blob/gcsblob"

// Google Cloud Storage is in this build. Open opens gs:// URLs with
// gocloud's default URL mux, where importing gcsblob registered its opener
// (gocloud exports no other way to its lazy credentials).
const gcsScheme, hasGCS = gcsblob.Scheme, true
