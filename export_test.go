package memtool

// SetViewChunk sets how much a streamed file view reads at a time (and
// below which size it reads a file whole), for one test; it returns the
// function that restores it.
func SetViewChunk(n int64) (restore func()) {
	old := viewChunk
	viewChunk = n
	return func() { viewChunk = old }
}

// WritesHeldAlone reports whether a command holds m's write lock alone
// (a change through m would wait for it).
func WritesHeldAlone(m *Memory) bool {
	if m.writes.TryRLock() {
		m.writes.RUnlock()
		return false
	}
	return true
}
