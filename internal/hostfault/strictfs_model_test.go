//go:build linux

package hostfault

import (
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
