//go:build !gcs

package objectstore_test

import "testing"

// TestGCSNotBuilt: without -tags gcs, gs:// URLs are refused with
// ErrNotBuilt and a text that says how to build with them.
func TestGCSNotBuilt(t *testing.T) {
	testNotBuilt(t, "gs://bucket?prefix=p", "memtool was built without Google Cloud Storage; rebuild with -tags gcs")
}
