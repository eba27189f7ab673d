//go:build linux

// This file holds a StrictFS's server: the process that serves the file
// system at its directory (strictfs.go) and keeps what its disk would
// hold (strictfs_image.go), and its answers to the commands of the test
// that started it.

package hostfault

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// An sfServer serves a StrictFS at dir and keeps what its disk holds.
type sfServer struct {
	dir string
	rng *rand.Rand

	mu     sync.Mutex
	base   *image             // what the disk held when dir was mounted
	log    []*change          // every change of a name since
	synced map[uint64]content // each file's content as of its last fsync
	info   map[uint64]content // each node's type, permissions, link target
	live   map[uint64]*sfNode // the nodes served now
	nlink  map[uint64]uint32  // each live node's names
	nextID uint64
	server *fuse.Server
}

// serveStrict serves an empty StrictFS at dir, says "ready" on out, and
// answers each command read from in with a line: "crash false" (keep
// only what is durable) or "crash true" (and some of the rest, at random
// from a source of seed) with "ok" once what the disk holds is served in
// place of what was. When in ends it unmounts dir and returns the exit
// code of the process.
func serveStrict(dir, seed string, in io.Reader, out io.Writer) int {
	n, _ := strconv.ParseUint(seed, 10, 64)
	s := &sfServer{dir: dir, rng: rand.New(rand.NewPCG(n, 1)), nextID: rootID + 1}
	if err := s.mount(newImage()); err != nil {
		fmt.Fprintf(out, "%v\n", err)
		return 1
	}
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		some, err := strconv.ParseBool(strings.TrimPrefix(sc.Text(), "crash "))
		if err == nil {
			err = s.crash(some)
		}
		if err != nil {
			fmt.Fprintf(out, "%s: %v\n", sc.Text(), err)
			continue
		}
		fmt.Fprintln(out, "ok")
	}
	if err := s.unmount(); err != nil {
		fmt.Fprintf(os.Stderr, "unmounting %s: %v\n", dir, err)
		return 1
	}
	return 0
}

// crash unmounts dir (no file may be open there) and serves in its place
// what the disk then holds: only what was durable, or with some that
// and, at random, some of the rest.
func (s *sfServer) crash(some bool) error {
	if err := s.unmount(); err != nil {
		return fmt.Errorf("unmounting: %w", err)
	}
	var rng *rand.Rand
	if some {
		rng = s.rng
	}
	s.mu.Lock()
	img := afterPowerLoss(s.base, s.log, s.synced, s.info, s.current, rng)
	s.mu.Unlock()
	if err := s.mount(img); err != nil {
		return fmt.Errorf("mounting: %w", err)
	}
	return nil
}

// current is the content of node id now, if it is served.
func (s *sfServer) current(id uint64) (content, bool) {
	n, ok := s.live[id]
	if !ok {
		return content{}, false
	}
	return n.c, true
}

// mount serves img at s.dir.
func (s *sfServer) mount(img *image) error {
	s.base = img
	s.log = nil
	s.synced, s.info = map[uint64]content{}, map[uint64]content{}
	s.live, s.nlink = map[uint64]*sfNode{}, map[uint64]uint32{}
	for id, n := range img.nodes {
		s.synced[id], s.info[id] = n, n
		if id >= s.nextID {
			s.nextID = id + 1
		}
	}
	root := s.node(rootID, img.nodes[rootID])
	// Every change comes through the kernel, which keeps its caches of
	// names and attributes right: they may last (each FUSE request costs
	// system calls, which are slow on some virtual machines).
	long := time.Hour
	opts := &fs.Options{
		EntryTimeout: &long, AttrTimeout: &long, NegativeTimeout: &long,
		RootStableAttr: &fs.StableAttr{Mode: syscall.S_IFDIR, Ino: rootID},
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, FsName: "memtool-strictfs", Name: "strictfs",
			DisableXAttrs: true, MaxBackground: 64,
		},
		OnAdd: func(ctx context.Context) { s.populate(ctx, img, root, rootID, map[uint64]*fs.Inode{}) },
	}
	server, err := fs.Mount(s.dir, root, opts)
	if err != nil {
		return err
	}
	s.server = server
	return nil
}

// populate gives the served tree directory dir's names in img.
func (s *sfServer) populate(ctx context.Context, img *image, parent *sfNode, dir uint64, made map[uint64]*fs.Inode) {
	for name, id := range img.dirs[dir] {
		s.nlink[id]++
		in, ok := made[id]
		if !ok {
			n := s.node(id, img.nodes[id])
			in = parent.NewPersistentInode(ctx, n, fs.StableAttr{Mode: n.c.kind, Ino: id})
			made[id] = in
			if n.c.kind == syscall.S_IFDIR {
				s.populate(ctx, img, n, id, made)
			}
		}
		parent.AddChild(name, in, false)
	}
}

// unmount stops serving s.dir; it fails while a file there is open.
func (s *sfServer) unmount() error {
	if s.server == nil {
		return nil
	}
	if err := s.server.Unmount(); err != nil {
		return err
	}
	s.server = nil
	return nil
}

// node makes the served node of id, with content c.
func (s *sfServer) node(id uint64, c content) *sfNode {
	c.data = append([]byte(nil), c.data...)
	n := &sfNode{s: s, id: id, c: c}
	s.live[id] = n
	return n
}

// made records a new node: its number, content and first name.
func (s *sfServer) made(kind, perm uint32, data []byte) *sfNode {
	id := s.nextID
	s.nextID++
	c := content{kind: kind, perm: perm & 0o7777, data: data, mtime: time.Now()}
	s.info[id] = c
	return s.node(id, c)
}

// record logs a change of a name and its effect on link counts.
func (s *sfServer) record(c *change) {
	s.log = append(s.log, c)
	switch c.kind {
	case addName:
		s.nlink[c.node]++
	case removeName:
		s.nlink[c.node]--
	case moveName:
		if c.node2 != 0 && !c.exchange {
			s.nlink[c.node2]--
		}
	}
}

// sync makes node n durable as an fsync does: a file's content, or every
// change of a name in a directory so far.
func (s *sfServer) sync(n *sfNode) {
	if n.c.kind != syscall.S_IFDIR {
		c := n.c
		c.data = append([]byte(nil), c.data...)
		s.synced[n.id] = c
		return
	}
	for _, c := range s.log {
		if c.touches(n.id) {
			c.durable = true
		}
	}
}
