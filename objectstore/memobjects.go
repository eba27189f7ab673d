package objectstore

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// memObjects is a bucket in memory (mem+blob://): gone when the process
// exits.
type memObjects struct {
	mu   sync.RWMutex
	objs map[string][]byte
}

func newMemObjects() *memObjects { return &memObjects{objs: map[string][]byte{}} }

func (m *memObjects) size(ctx context.Context, key string) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	data, ok := m.objs[key]
	if !ok {
		return 0, errNotFound
	}
	return int64(len(data)), nil
}

func (m *memObjects) read(ctx context.Context, key string, limit int64) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	data, ok := m.objs[key]
	switch {
	case !ok:
		return nil, errNotFound
	case int64(len(data)) > limit:
		return nil, errTooLarge
	}
	return slices.Clone(data), nil
}

func (m *memObjects) write(ctx context.Context, key string, data []byte, createOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok && createOnly {
		return errExists
	}
	m.objs[key] = append([]byte{}, data...)
	return nil
}

func (m *memObjects) remove(ctx context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; !ok {
		return errNotFound
	}
	delete(m.objs, key)
	return nil
}

func (m *memObjects) list(ctx context.Context, prefix string, delim bool, fn func(listed) bool) error {
	m.mu.RLock()
	var found []listed
	for key, data := range m.objs {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		if i := strings.IndexByte(key[len(prefix):], '/'); delim && i >= 0 {
			found = append(found, listed{key: key[:len(prefix)+i+1], dir: true})
			continue
		}
		found = append(found, listed{key: key, size: int64(len(data))})
	}
	m.mu.RUnlock()
	return yieldSorted(found, fn)
}

func (m *memObjects) close() error { return nil }

// yieldSorted calls fn with the entries in key order, each common prefix
// once, until fn returns false.
func yieldSorted(found []listed, fn func(listed) bool) error {
	slices.SortFunc(found, func(a, b listed) int { return strings.Compare(a.key, b.key) })
	found = slices.CompactFunc(found, func(a, b listed) bool { return a.dir && b.dir && a.key == b.key })
	for _, l := range found {
		if !fn(l) {
			break
		}
	}
	return nil
}
