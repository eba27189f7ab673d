//go:build !linux

package sqlitestore

import "os"

// syncData is the file's Sync where fdatasync(2) is missing or is not
// what makes data durable (macOS: F_FULLFSYNC).
func syncData(f *os.File) error { return f.Sync() }
