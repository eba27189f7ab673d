package stacktest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/history"
)

// A process that dies while it keeps a version and prunes for MaxBytes,
// at any of its steps in history's directory, leaves every version that
// is listed whole (history, diff and revert work on it), and the next
// process keeps the bound, within the margin of the one version the
// dead one may have left uncounted.
func TestDeathDuringMaxBytesPruneLeavesVersionsWhole(t *testing.T) {
	for name, open := range sharedBases(t) {
		t.Run(name, func(t *testing.T) {
			for at := 1; ; at++ {
				if !deathAt(t, open, at) {
					if at < 5 {
						t.Fatalf("the command made %d calls in history's directory; a prune makes more", at-1)
					}
					return
				}
			}
		})
	}
}

// deathAt runs, over a store whose versions are just under MaxBytes, an
// edit whose version takes them past it, and stops that process for good
// at its at'th call in history's directory. It then checks the store
// through another process, and reports whether the edit was stopped.
func deathAt(t *testing.T, open func() (memtool.Store, memtool.Store), at int) (stopped bool) {
	ctx := context.Background()
	a, b := open()
	h := newHook(a)
	lim := hostileLimits
	const maxBytes = 4 * hostileFileSize
	opts := &history.Options{MaxBytes: maxBytes}
	st := newStack(t, h, stackOptions{limits: &lim, history: opts})
	if !hostileRound(t, st, "/memories/f0.md") { // 4 versions of 499 bytes: 1,996
		t.FailNow()
	}
	st.mustRun(t, create("/memories/f1.md", hostileText(0)))

	calls, dead, done := 0, make(chan struct{}), make(chan struct{})
	h.set(func(op, name string) {
		if !strings.HasPrefix(name, history.DirName) {
			return
		}
		if calls++; calls == at {
			close(dead)
			select {} // the process is gone: nothing after this call happens
		}
	})
	go func() {
		st.run(t, map[string]any{"command": "str_replace", "path": "/memories/f1.md", "old_str": "v0", "new_str": "v1"})
		close(done)
	}()
	select {
	case <-dead:
	case <-done:
		h.set(nil)
		// Not stopped: it kept its version, and pruned f0's oldest.
		if vs, err := history.Versions(ctx, st.belowHistory, "/memories/f0.md"); err != nil || len(vs) != 2 {
			t.Errorf("after the edit, f0's versions: %v, %v; want the newest 2 of 4", vs, err)
		}
		return false
	}

	// Another process, with its own stack over the same store.
	other := newStack(t, b, stackOptions{limits: &lim, history: opts, keys: []encrypt.Key{st.key}})
	texts := []string{hostileText(0), hostileText(1), hostileText(2), hostileText(3)}
	for i := range 2 {
		p := fmt.Sprintf("/memories/f%d.md", i)
		vs, err := history.Versions(ctx, other.belowHistory, p)
		if err != nil {
			t.Fatalf("stopped at call %d: versions of %s: %v", at, p, err)
		}
		for _, v := range vs {
			got, err := history.Read(ctx, other.belowHistory, p, v.N)
			if err != nil || !slices.Contains(texts, string(got)) {
				t.Errorf("stopped at call %d: %s version %d: %.20q…, %v", at, p, v.N, got, err)
			}
		}
		if len(vs) > 0 && i == 1 {
			if err := history.Revert(ctx, other.top, other.belowHistory, p, vs[0].N); err != nil {
				t.Errorf("stopped at call %d: revert of %s to version %d: %v", at, p, vs[0].N, err)
			}
		}
	}
	for i := range 2 {
		if !hostileRound(t, other, fmt.Sprintf("/memories/g%d.md", i)) {
			t.FailNow()
		}
	}
	if _, size := versionBytes(t, other.belowHistory); size > maxBytes+hostileFileSize {
		t.Errorf("stopped at call %d: then the versions hold %d bytes, over MaxBytes %d and one version", at, size, maxBytes)
	}
	return true
}
