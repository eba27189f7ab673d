//go:build linux

// This file holds the StrictFS's answers to the kernel: each FUSE
// operation on a node, made on the node's content in memory and, for a
// change of a name, logged (strictfs_image.go) so that a crash can tell
// whether the disk would hold it.

package hostfault

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// An sfNode is a file, directory or symbolic link of a StrictFS.
type sfNode struct {
	fs.Inode
	s  *sfServer
	id uint64
	c  content // guarded by s.mu
}

var (
	_ fs.NodeGetattrer  = (*sfNode)(nil)
	_ fs.NodeSetattrer  = (*sfNode)(nil)
	_ fs.NodeOpener     = (*sfNode)(nil)
	_ fs.NodeReader     = (*sfNode)(nil)
	_ fs.NodeWriter     = (*sfNode)(nil)
	_ fs.NodeFsyncer    = (*sfNode)(nil)
	_ fs.NodeFlusher    = (*sfNode)(nil)
	_ fs.NodeCreater    = (*sfNode)(nil)
	_ fs.NodeTmpfiler   = (*sfNode)(nil)
	_ fs.NodeMkdirer    = (*sfNode)(nil)
	_ fs.NodeSymlinker  = (*sfNode)(nil)
	_ fs.NodeReadlinker = (*sfNode)(nil)
	_ fs.NodeLinker     = (*sfNode)(nil)
	_ fs.NodeUnlinker   = (*sfNode)(nil)
	_ fs.NodeRmdirer    = (*sfNode)(nil)
	_ fs.NodeRenamer    = (*sfNode)(nil)
	_ fs.NodeStatfser   = (*sfNode)(nil)
)

// attr fills a with n's attributes; s.mu is held.
func (n *sfNode) attr(a *fuse.Attr) {
	a.Ino = n.id
	a.Mode = n.c.kind | n.c.perm
	a.Size = uint64(len(n.c.data))
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	a.Nlink = n.s.nlink[n.id]
	if n.c.kind == syscall.S_IFDIR {
		a.Nlink = 2
	}
	a.SetTimes(nil, &n.c.mtime, &n.c.mtime)
}

func (n *sfNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	n.attr(&out.Attr)
	return 0
}

func (n *sfNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	if size, ok := in.GetSize(); ok {
		if n.c.kind != syscall.S_IFREG {
			return syscall.EISDIR
		}
		n.resize(int(size))
	}
	if mode, ok := in.GetMode(); ok {
		n.c.perm = mode & 0o7777
	}
	if mtime, ok := in.GetMTime(); ok {
		n.c.mtime = mtime
	}
	n.attr(&out.Attr)
	return 0
}

// resize makes n's data size bytes long; s.mu is held.
func (n *sfNode) resize(size int) {
	if size <= len(n.c.data) {
		n.c.data = n.c.data[:size:size]
	} else {
		n.c.data = append(n.c.data, make([]byte, size-len(n.c.data))...)
	}
	n.c.mtime = time.Now()
}

// Open lets the kernel cache what is read (SQLite maps its -shm file),
// and keep it from one open to the next, as every change comes through
// the kernel; not what is written: without FUSE's writeback cache, every
// write(2) comes here before it returns, and an fsync finds it here. A
// crash mounts a new file system, with nothing cached.
func (n *sfNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *sfNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	if off >= int64(len(n.c.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(n.c.data)))
	return fuse.ReadResultData(append([]byte(nil), n.c.data[off:end]...)), 0
}

func (n *sfNode) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	if end := int(off) + len(data); end > len(n.c.data) {
		n.resize(end)
	}
	copy(n.c.data[off:], data)
	n.c.mtime = time.Now()
	return uint32(len(data)), 0
}

// Fsync is both fsync(2) of a file and of a directory.
func (n *sfNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	n.s.sync(n)
	return 0
}

// Flush, at each close, has nothing to do: ENOSYS tells the kernel to
// stop asking.
func (n *sfNode) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno { return syscall.ENOSYS }

func (n *sfNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Blocks, out.Bfree, out.Bavail = 1<<24, 1<<23, 1<<23
	out.Files, out.Ffree = 1<<20, 1<<19
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	return 0
}

// add makes a new node of kind under name in n, logging the new name.
func (n *sfNode) add(ctx context.Context, name string, kind, perm uint32, data []byte, out *fuse.EntryOut) *fs.Inode {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	child := n.s.made(kind, perm, data)
	n.s.record(&change{kind: addName, dir: n.id, name: name, node: child.id})
	child.attr(&out.Attr)
	return n.NewPersistentInode(ctx, child, fs.StableAttr{Mode: kind, Ino: child.id})
}

func (n *sfNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return n.add(ctx, name, syscall.S_IFREG, mode, nil, out), nil, fuse.FOPEN_KEEP_CACHE, 0
}

// Tmpfile makes a file without a name (O_TMPFILE): nothing is logged
// until a link gives it one.
func (n *sfNode) Tmpfile(ctx context.Context, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	child := n.s.made(syscall.S_IFREG, mode, nil)
	child.attr(&out.Attr)
	return n.NewPersistentInode(ctx, child, fs.StableAttr{Mode: syscall.S_IFREG, Ino: child.id}), nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *sfNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.add(ctx, name, syscall.S_IFDIR, mode, nil, out), 0
}

func (n *sfNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.add(ctx, name, syscall.S_IFLNK, 0o777, []byte(target), out), 0
}

func (n *sfNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	if n.c.kind != syscall.S_IFLNK {
		return nil, syscall.EINVAL
	}
	return append([]byte(nil), n.c.data...), 0
}

func (n *sfNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*sfNode)
	if !ok {
		return nil, syscall.EXDEV
	}
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	n.s.record(&change{kind: addName, dir: n.id, name: name, node: t.id})
	t.attr(&out.Attr)
	return t.EmbeddedInode(), 0
}

// child is the node of name in n, or nil.
func (n *sfNode) child(name string) *sfNode {
	if in := n.GetChild(name); in != nil {
		if c, ok := in.Operations().(*sfNode); ok {
			return c
		}
	}
	return nil
}

func (n *sfNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, false)
}

func (n *sfNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, true)
}

func (n *sfNode) remove(name string, dir bool) syscall.Errno {
	c := n.child(name)
	if c == nil {
		return syscall.ENOENT
	}
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	switch isDir := c.c.kind == syscall.S_IFDIR; {
	case dir && !isDir:
		return syscall.ENOTDIR
	case !dir && isDir:
		return syscall.EISDIR
	case dir && len(c.Children()) > 0:
		return syscall.ENOTEMPTY
	}
	n.s.record(&change{kind: removeName, dir: n.id, name: name, node: c.id})
	return 0
}

func (n *sfNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to, ok := newParent.(*sfNode)
	src := n.child(name)
	if !ok || src == nil {
		return syscall.ENOENT
	}
	dst := to.child(newName)
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	c := &change{kind: moveName, dir: n.id, name: name, node: src.id, dir2: to.id, name2: newName,
		noReplace: flags&unix.RENAME_NOREPLACE != 0, exchange: flags&unix.RENAME_EXCHANGE != 0}
	switch {
	case c.noReplace && dst != nil:
		return syscall.EEXIST
	case c.exchange && dst == nil:
		return syscall.ENOENT
	case dst == src:
		return syscall.EINVAL // two names of one file; memtool never renames so
	case dst != nil && !c.exchange:
		srcDir, dstDir := src.c.kind == syscall.S_IFDIR, dst.c.kind == syscall.S_IFDIR
		switch {
		case srcDir && !dstDir:
			return syscall.ENOTDIR
		case !srcDir && dstDir:
			return syscall.EISDIR
		case dstDir && len(dst.Children()) > 0:
			return syscall.ENOTEMPTY
		}
	}
	if dst != nil {
		c.node2 = dst.id
	}
	n.s.record(c)
	return 0
}
