// This file holds ResolveName (memtool.Resolver): where a name leads once
// the links on its way are followed.

package filestore

import (
	"context"
	"io/fs"
	"path"
	"strings"

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
func (s *Store) ResolveName(ctx context.Context, name string) string {
	var done []string // the components resolved so far, links followed
	rest := splitName(name)
	for links := 0; len(rest) > 0; {
		if ctx.Err() != nil {
			return name
		}
		here := path.Join(path.Join(done...), rest[0])
		fi, err := s.root.Lstat(here)
		if err != nil {
			return path.Join(append(done, rest...)...)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done, rest = append(done, rest[0]), rest[1:]
			continue
		}
		target, err := s.root.Readlink(here)
		if links++; err != nil || links > maxLinks || path.IsAbs(target) {
			return name
		}
		joined := path.Join(path.Join(done...), target)
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return name
		}
		done, rest = nil, append(splitName(joined), rest[1:]...)
	}
	return path.Join(done...)
}

// splitName returns the components of a store name ("" and "." have none).
func splitName(name string) []string {
	if name == "" || name == "." {
		return nil
	}
	return strings.Split(name, "/")
}
