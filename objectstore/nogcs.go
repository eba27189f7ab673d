//go:build !gcs

package objectstore

// Google Cloud Storage is left out of this build: Open refuses gs:// URLs
// with ErrNotBuilt. Build with -tags gcs to add it.
const gcsScheme, hasGCS = "gs", false
