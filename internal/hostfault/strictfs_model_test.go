//go:build linux

package hostfault

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
)

// TestStrictFSCrashIsReproducible shows that a crash keeping some of
// what was not durable makes the same choices from the same seed, so
// that a failing run can be run again: afterPowerLoss draws each file's
// data in an order of its own, not in the order of a map.
func TestStrictFSCrashIsReproducible(t *testing.T) {
	base := newImage()
	synced, info := map[uint64]content{}, map[uint64]content{}
	live := map[uint64]content{}
	var log []*change
	for i := range 32 {
		id := uint64(rootID + 1 + i)
		c := content{kind: syscall.S_IFREG, perm: 0o600, data: []byte(fmt.Sprintf("synced %d", i))}
		base.dirs[rootID][fmt.Sprintf("f%02d", i)] = id
		base.nodes[id] = c
		synced[id], info[id] = c, c
		c.data = []byte(fmt.Sprintf("current %d", i))
		live[id] = c
		log = append(log, &change{kind: addName, dir: rootID, name: fmt.Sprintf("g%02d", i), node: id})
	}
	current := func(id uint64) (content, bool) { c, ok := live[id]; return c, ok }
	crash := func() string {
		rng := rand.New(rand.NewPCG(7, 1))
		return afterPowerLoss(base, log, synced, info, current, rng).describe()
	}
	want := crash()
	for range 20 {
		if got := crash(); got != want {
			t.Fatalf("two crashes from one seed differ:\n%s\nand\n%s", want, got)
		}
	}
}

// TestWrittenBackTearsByPage shows what a power loss during writeback
// leaves of a file changed since its fsync: all of what it is now, or its
// size now with each 4 KiB page as now or as synced (zeros past what was
// synced), and each of these at some crash.
func TestWrittenBackTearsByPage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	synced := content{kind: syscall.S_IFREG, data: bytes.Repeat([]byte("a"), 2*page+10)}
	now := content{kind: syscall.S_IFREG, data: bytes.Repeat([]byte("b"), 4*page)}
	seen := map[string]bool{}
	for range 200 {
		got := writtenBack(synced, now, rng).data
		if len(got) != len(now.data) {
			t.Fatalf("%d bytes, want %d", len(got), len(now.data))
		}
		var pages []string
		for off := 0; off < len(got); off += page {
			p := got[off : off+page]
			var was []byte
			if off < len(synced.data) {
				was = synced.data[off:min(off+page, len(synced.data))]
			}
			switch {
			case bytes.Equal(p, now.data[off:off+page]):
				pages = append(pages, "new")
			case bytes.Equal(p, append(append([]byte(nil), was...), make([]byte, page-len(was))...)):
				pages = append(pages, "old")
			default:
				t.Fatalf("page at %d is neither new nor as synced: %q...", off, p[:16])
			}
		}
		seen[fmt.Sprint(pages)] = true
	}
	for _, want := range []string{"[new new new new]", "[old old old old]", "[new old new old]", "[old new old new]"} {
		if !seen[want] {
			t.Errorf("pages %s never seen in 200 crashes (seen %v)", want, seen)
		}
	}
	if same := writtenBack(now, now, rng); !bytes.Equal(same.data, now.data) {
		t.Errorf("a file unchanged since its fsync came back changed")
	}
}
