package storetest_test

// The state of the broken stores that remember what they should not.

import (
	"context"
	"strings"

	"github.com/memtool/memtool"
)

// forget drops the listings kept (by WriteFile and Mkdir only: the
// stale-listing store forgets to on Remove, Rename and RemoveAll).
func (b *broken) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cache = nil
	b.bufs = nil
}

// forgetAll is forget, but for the listings of the stale-listing store.
func (b *broken) forgetAll() {
	if b.defect != "stale-listing" {
		b.forget()
	}
}

// shared gives the shares-buffers store's own slice of name's content if
// data is nil, and otherwise keeps data itself as name's content: a cache
// that hands out its own bytes, and keeps the caller's.
func (b *broken) shared(name string, data []byte) ([]byte, bool) {
	if b.defect != "shares-buffers" {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if data == nil {
		data, ok := b.bufs[name]
		return data, ok
	}
	if b.bufs == nil {
		b.bufs = map[string][]byte{}
	}
	b.bufs[name] = data
	return data, true
}

// removed reports whether name was removed, and marks it removed if mark.
func (b *broken) removed(name string, mark ...bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(mark) > 0 {
		if b.gone == nil {
			b.gone = map[string]bool{}
		}
		b.gone[name] = true
	}
	return b.gone[name]
}

// hide keeps the subtree of the directory name, for the hidden-orphans
// store, which leaves it behind, out of sight, when it moves or removes
// the directory, and brings it back when the name is made again.
func (b *broken) hide(ctx context.Context, name string) {
	if b.defect != "hidden-orphans" {
		return
	}
	var kept []string
	memtool.Walk(ctx, b.inner, name, func(n string, fi memtool.FileInfo) error {
		if n != name && fi.IsRegular() {
			data, _ := b.inner.ReadFile(ctx, n, 1<<30)
			kept = append(kept, n+"\x00"+string(data))
		} else if n != name {
			kept = append(kept, n)
		}
		return nil
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.orphans == nil {
		b.orphans = map[string][]string{}
	}
	b.orphans[name] = kept
}

// unhide brings back what hide kept of name.
func (b *broken) unhide(ctx context.Context, name string) {
	b.mu.Lock()
	kept := b.orphans[name]
	b.mu.Unlock()
	for _, e := range kept {
		if n, data, ok := strings.Cut(e, "\x00"); ok {
			b.inner.WriteFile(ctx, n, []byte(data), memtool.CreateOnly)
		} else {
			b.inner.Mkdir(ctx, n)
		}
	}
}
