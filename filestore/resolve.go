// This file holds ResolveName (memtool.Resolver): where a name leads once
// the links on its way are followed.

package filestore

import (
	"context"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

var _ memtool.Resolver = (*Store)(nil)

// maxLinks bounds the links one name may pass through, as the kernel's
// 40 (ELOOP) does.
const maxLinks = 40

// ResolveName returns the name of the entry name leads to, with each
// symbolic link on its way followed as the store follows it: a relative
// link whose target stays in the store. The part from the first component
// that does not exist on is kept as given; a link that leads out (an
// absolute target, one that climbs above the store), a loop, or an error
// gives name back as it is, since the store will not follow it either.
// It walks down from the store's directory one descriptor at a time: a
// stat per component, an open per directory passed through (and, from
// each link, again from the top).
func (s *Store) ResolveName(ctx context.Context, name string) string {
	resolved := name
	withFd(s.self, func(top int) error {
		resolved = resolveFrom(ctx, top, name)
		return nil
	})
	return resolved
}

func resolveFrom(ctx context.Context, top int, name string) string {
	var done []string // the components resolved so far, links followed
	rest := splitName(name)
	cur := top // the directory of done, open
	up := func() {
		if cur != top {
			unix.Close(cur)
		}
		cur = top
	}
	defer up()
	for links := 0; len(rest) > 0; {
		if ctx.Err() != nil {
			return name
		}
		var st unix.Stat_t
		if err := statAt(cur, rest[0], &st); err != nil {
			return path.Join(append(done, rest...)...)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := readlinkAt(cur, rest[0])
			if links++; err != nil || links > maxLinks || path.IsAbs(target) {
				return name
			}
			joined := path.Join(path.Join(done...), target)
			if joined == ".." || strings.HasPrefix(joined, "../") {
				return name
			}
			up()
			done, rest = nil, append(splitName(joined), rest[1:]...)
			continue
		case unix.S_IFDIR:
			if len(rest) > 1 {
				fd, err := unix.Openat(cur, rest[0], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return name
				}
				up()
				cur = fd
			}
		default:
			// A file: nothing is below it, and the rest stays as given.
			return path.Join(append(done, rest...)...)
		}
		done, rest = append(done, rest[0]), rest[1:]
	}
	return path.Join(done...)
}

// readlinkAt returns the target of the link name in the directory dfd.
func readlinkAt(dfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dfd, name, buf)
		switch {
		case err == unix.EINTR:
			size /= 2
		case err != nil:
			return "", err
		case n < size:
			return string(buf[:n]), nil
		}
	}
}

// splitName returns the components of a store name ("" and "." have none).
func splitName(name string) []string {
	if name == "" || name == "." {
		return nil
	}
	return strings.Split(name, "/")
}
