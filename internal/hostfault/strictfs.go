//go:build linux

package hostfault

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// A StrictFS is a file system whose machine can lose its power, for
// tests, stricter than PowerLoss's ext4: a file system in memory, served
// by this process over FUSE at Dir, that holds on its "disk" only what
// POSIX says an fsync makes durable. A file's data is durable as of its
// last fsync (or fdatasync); a name made, removed or moved in a
// directory (create, mkdir, link, unlink, rmdir, rename) is durable only
// once that directory has been fsynced, an fsync of the file itself does
// not do it, and a fsync of one directory makes nothing durable in
// another. ext4 commits its whole journal at any fsync, so there a
// change made without its own fsync survives as soon as anything else
// is fsynced; here it does not.
//
// Crash takes what the disk holds, as after a power loss, and serves it
// at Dir in place of the file system the program saw. Each crash keeps,
// at random, either only what was made durable, or that and, one in
// two, each change that was not (in the order they were made, as far as
// what was kept allows) and each file's data as it is rather than as
// last synced: a disk the kernel had written some of the rest to on its
// own, such as a file's new name without its data.
type StrictFS struct {
	Dir string
	t   testing.TB
	rng *rand.Rand

	mu     sync.Mutex
	base   *image             // what the disk held when Dir was mounted
	log    []*change          // every change of a name since
	synced map[uint64]content // each file's content as of its last fsync
	info   map[uint64]content // each node's type, permissions, link target
	live   map[uint64]*sfNode // the nodes served now
	nlink  map[uint64]uint32  // each live node's names
	nextID uint64
	server *fuse.Server
}

// NewStrictFS mounts an empty StrictFS at a new directory, removed when
// the test ends. Its crashes take their random choices from a source
// seeded by the test's name.
func NewStrictFS(t testing.TB) *StrictFS {
	t.Helper()
	NeedRoot(t, "mounting a FUSE file system")
	if _, err := os.Stat("/dev/fuse"); err != nil {
		Unavailable(t, "FUSE: "+err.Error())
	}
	dir, err := os.MkdirTemp("", "memtool-strictfs-")
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	s := &StrictFS{Dir: dir, t: t, rng: rand.New(rand.NewPCG(h.Sum64(), 1)), nextID: rootID + 1}
	t.Cleanup(func() {
		if s.server != nil && s.server.Unmount() != nil {
			// A process of a failed test may still hold a file there.
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
		s.server = nil
		os.Remove(dir)
	})
	s.mount(newImage())
	return s
}

// Crash loses the power: every process writing under Dir must have
// ended and closed its files there (killed: a crash gives no chance to
// finish). It serves at Dir what the disk then holds, keeping either
// only what was durable or, at random, some of the rest too (the log
// says which).
func (s *StrictFS) Crash() {
	s.t.Helper()
	s.CrashKeeping(s.rng.IntN(2) == 0)
}

// CrashKeeping is Crash, keeping some of what was not durable if some.
func (s *StrictFS) CrashKeeping(some bool) {
	s.t.Helper()
	s.unmount()
	var rng *rand.Rand
	if some {
		rng = s.rng
	}
	s.mu.Lock()
	img := afterPowerLoss(s.base, s.log, s.synced, s.info, s.current, rng)
	s.mu.Unlock()
	s.t.Logf("strictfs: power lost; kept %s", map[bool]string{false: "only what was durable", true: "what was durable and some of the rest"}[some])
	s.mount(img)
}

// current is the content of node id now, if it is served.
func (s *StrictFS) current(id uint64) (content, bool) {
	n, ok := s.live[id]
	if !ok {
		return content{}, false
	}
	return n.c, true
}

func (s *StrictFS) mount(img *image) {
	s.t.Helper()
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
	zero := time.Duration(0)
	opts := &fs.Options{
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
		RootStableAttr: &fs.StableAttr{Mode: syscall.S_IFDIR, Ino: rootID},
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, FsName: "memtool-strictfs", Name: "strictfs",
			DisableXAttrs: true, MaxBackground: 64,
		},
		OnAdd: func(ctx context.Context) { s.populate(ctx, img, root, rootID, map[uint64]*fs.Inode{}) },
	}
	server, err := fs.Mount(s.Dir, root, opts)
	if err != nil {
		Unavailable(s.t, "mounting a FUSE file system: "+err.Error())
	}
	s.server = server
}

// populate gives the served tree directory dir's names in img.
func (s *StrictFS) populate(ctx context.Context, img *image, parent *sfNode, dir uint64, made map[uint64]*fs.Inode) {
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

func (s *StrictFS) unmount() {
	if s.server == nil {
		return
	}
	if err := s.server.Unmount(); err != nil {
		s.t.Fatalf("unmounting the FUSE file system at %s: %v", s.Dir, err)
	}
	s.server = nil
}

// node makes the served node of id, with content c.
func (s *StrictFS) node(id uint64, c content) *sfNode {
	c.data = append([]byte(nil), c.data...)
	n := &sfNode{s: s, id: id, c: c}
	s.live[id] = n
	return n
}

// made records a new node: its number, content and first name.
func (s *StrictFS) made(kind, perm uint32, data []byte) *sfNode {
	id := s.nextID
	s.nextID++
	c := content{kind: kind, perm: perm & 0o7777, data: data, mtime: time.Now()}
	s.info[id] = c
	return s.node(id, c)
}

// record logs a change of a name and its effect on link counts.
func (s *StrictFS) record(c *change) {
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
func (s *StrictFS) sync(n *sfNode) {
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
