//go:build gcs

package storeurl_test

const gcsBuilt = true
