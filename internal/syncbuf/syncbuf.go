// Package syncbuf is a bytes.Buffer that goroutines may write while a test
// reads it: the sink of the audit log, slog handlers and the servers'
// access logs in tests.
package syncbuf

import (
	"bytes"
	"sync"
)

// A Buffer is a bytes.Buffer behind a mutex. The zero value is empty and
// ready to use; it must not be copied after first use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Len returns how many bytes were written so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}
