//go:build linux

// This file holds what a StrictFS keeps to answer what its disk would
// hold after a power loss: the image it was mounted from, the log of
// every change of a name since, which of them a directory's fsync made
// durable, and each file's content as of its last fsync.

package hostfault

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"syscall"
	"time"
)

// rootID is the root directory's node number.
const rootID = 1

// content is what a node holds: its type and permissions, its data (a
// symbolic link's target) and its modification time.
type content struct {
	kind  uint32 // syscall.S_IFREG, S_IFDIR or S_IFLNK
	perm  uint32
	data  []byte
	mtime time.Time
}

// image is a file system at rest: each directory's names, and each
// node's content. A directory's node has an entry in dirs (perhaps
// empty) once it holds or held a name.
type image struct {
	dirs  map[uint64]map[string]uint64
	nodes map[uint64]content
}

func newImage() *image {
	return &image{
		dirs:  map[uint64]map[string]uint64{rootID: {}},
		nodes: map[uint64]content{rootID: {kind: syscall.S_IFDIR, perm: 0o755, mtime: time.Now()}},
	}
}

func (img *image) clone() *image {
	c := &image{dirs: map[uint64]map[string]uint64{}, nodes: map[uint64]content{}}
	for id, names := range img.dirs {
		c.dirs[id] = make(map[string]uint64, len(names))
		for name, child := range names {
			c.dirs[id][name] = child
		}
	}
	for id, n := range img.nodes {
		c.nodes[id] = n
	}
	return c
}

// names is directory dir's names, made if need be.
func (img *image) names(dir uint64) map[string]uint64 {
	if img.dirs[dir] == nil {
		img.dirs[dir] = map[string]uint64{}
	}
	return img.dirs[dir]
}

// change is one change of a name, in the order the file system made it.
type change struct {
	kind      changeKind
	dir       uint64 // the directory of name
	name      string
	node      uint64 // the node name is (or was) of
	dir2      uint64 // a rename's new directory
	name2     string // a rename's new name
	node2     uint64 // the node name2 was of before a rename, or 0
	noReplace bool   // a rename that fails when name2 is taken
	exchange  bool   // a rename that swaps name and name2
	durable   bool   // an fsync of dir or dir2 made it durable
}

type changeKind int

const (
	addName    changeKind = iota // create, mkdir, symlink, link
	removeName                   // unlink, rmdir
	moveName                     // rename
)

// touches reports whether an fsync of directory dir makes c durable.
func (c *change) touches(dir uint64) bool {
	return c.dir == dir || c.kind == moveName && c.dir2 == dir
}

// apply makes change c on img, as the disk would hold it had it been
// written. A change the disk cannot hold any more (a name it adds is
// taken, one it removes or moves is gone, which only a change that was
// not durable, lost, can cause) is not made; except that a durable
// rename is made whole (an fsync of either directory wrote it): it gives
// the node its new name even where its old one is gone, replaces what a
// lost change left at the new name even with RENAME_NOREPLACE, and
// swaps both names with RENAME_EXCHANGE whatever either held.
func (img *image) apply(c *change) {
	from := img.names(c.dir)
	switch c.kind {
	case addName:
		if _, taken := from[c.name]; !taken {
			from[c.name] = c.node
		}
	case removeName:
		if from[c.name] == c.node {
			delete(from, c.name)
		}
	case moveName:
		to := img.names(c.dir2)
		there := from[c.name] == c.node
		switch {
		case c.exchange:
			if c.durable || there && to[c.name2] == c.node2 {
				from[c.name], to[c.name2] = c.node2, c.node
			}
		case !there && !c.durable:
		case c.noReplace && to[c.name2] != 0 && !c.durable:
		default:
			if there {
				delete(from, c.name)
			}
			to[c.name2] = c.node
		}
	}
}

// reachable is img with only what can be reached from the root: a
// directory reached a second time (only lost renames can make one) is
// left where it was reached first.
func (img *image) reachable() *image {
	out := &image{dirs: map[uint64]map[string]uint64{}, nodes: map[uint64]content{}}
	queue := []uint64{rootID}
	out.nodes[rootID] = img.nodes[rootID]
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		names := out.names(dir)
		for _, name := range sortedNames(img.dirs[dir]) {
			id := img.dirs[dir][name]
			n, ok := img.nodes[id]
			if !ok {
				continue
			}
			if _, seen := out.nodes[id]; seen && n.kind == syscall.S_IFDIR {
				continue
			}
			names[name] = id
			if _, seen := out.nodes[id]; !seen && n.kind == syscall.S_IFDIR {
				queue = append(queue, id)
			}
			out.nodes[id] = n
		}
	}
	return out
}

func sortedNames(names map[string]uint64) []string {
	s := make([]string, 0, len(names))
	for name := range names {
		s = append(s, name)
	}
	sort.Strings(s)
	return s
}

// afterPowerLoss is the image a power loss at this moment would leave:
// base with every durable change made, and each file's data as its last
// fsync left it (none: empty). With rng, also each change that was not
// made durable, and for each file, one in two, what the kernel may have
// written of its data by then on its own (writtenBack), each at random.
// current gives a live node's content now; info gives the type and
// permissions of every node ever made.
func afterPowerLoss(base *image, log []*change, synced map[uint64]content, info map[uint64]content, current func(uint64) (content, bool), rng *rand.Rand) *image {
	img := base.clone()
	for _, c := range log {
		if c.durable || rng != nil && rng.IntN(2) == 0 {
			img.apply(c)
		}
	}
	// Each node once, in the order of its number, not of a map: a seed
	// makes the same choices again.
	named := map[uint64]bool{}
	for _, names := range img.dirs {
		for _, id := range names {
			named[id] = true
		}
	}
	ids := make([]uint64, 0, len(named))
	for id := range named {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		n, ok := synced[id]
		if !ok {
			n = info[id]
			n.data, n.mtime = nil, time.Now()
			if n.kind == syscall.S_IFLNK || n.kind == syscall.S_IFDIR {
				n = info[id] // a link's target and a directory are part of making its name
			}
		}
		if now, live := current(id); live && rng != nil && n.kind == syscall.S_IFREG && rng.IntN(2) == 0 {
			n = writtenBack(n, now, rng)
		}
		img.nodes[id] = n
	}
	return img.reachable()
}

// page is the unit in which the kernel writes a file's data back.
const page = 4096

// writtenBack is a file's content after a power loss that came while
// the kernel was writing back what changed since its last fsync
// (synced): one in two, all of it (now); otherwise the size it has now
// (a size can reach the disk before the data), each page of it as now
// or, one in two, as synced (zeros past what was synced).
func writtenBack(synced, now content, rng *rand.Rand) content {
	if bytes.Equal(synced.data, now.data) || rng.IntN(2) == 0 {
		return now
	}
	c := now
	c.data = make([]byte, len(now.data))
	for off := 0; off < len(c.data); off += page {
		end := min(off+page, len(c.data))
		if rng.IntN(2) == 0 {
			copy(c.data[off:end], now.data[off:end])
		} else if off < len(synced.data) {
			copy(c.data[off:end], synced.data[off:min(end, len(synced.data))])
		}
	}
	return c
}

// describe lists img's names and contents, one line each, sorted, for a
// test's messages.
func (img *image) describe() string {
	var b bytes.Buffer
	var walk func(dir uint64, prefix string)
	walk = func(dir uint64, prefix string) {
		for _, name := range sortedNames(img.dirs[dir]) {
			id := img.dirs[dir][name]
			n := img.nodes[id]
			switch n.kind {
			case syscall.S_IFDIR:
				fmt.Fprintf(&b, "%s%s/\n", prefix, name)
				walk(id, prefix+name+"/")
			default:
				fmt.Fprintf(&b, "%s%s %q\n", prefix, name, n.data)
			}
		}
	}
	walk(rootID, "")
	return b.String()
}
