//go:build gcs

package objectstore_test

import "testing"

// TestGCSBuilt: with -tags gcs, Open opens gs:// URLs (against an
// emulator address, which opening does not contact).
func TestGCSBuilt(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1")
	testBuilt(t, "gs://bucket?prefix=p")
}
