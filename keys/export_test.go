package keys

// SetMaxCached bounds the keyring cache of the keyrings opened after it,
// until the returned function restores the bound.
func SetMaxCached(n int) (restore func()) {
	old := maxCached
	maxCached = n
	return func() { maxCached = old }
}

// Cached is the number of keys k's cache holds.
func (k *Keyring) Cached() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cache.Len()
}
