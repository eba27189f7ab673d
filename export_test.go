package memtool

// SetViewChunk sets how much a streamed file view reads at a time (and
// below which size it reads a file whole), for one test; it returns the
// function that restores it.
func SetViewChunk(n int64) (restore func()) {
	old := viewChunk
	viewChunk = n
	return func() { viewChunk = old }
}
