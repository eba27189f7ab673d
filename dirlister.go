package memtool

import "context"

// DirLister is the optional capability of reading a directory once and
// examining its entries only if it holds few of them: a directory store
// reads the names (getdents) and stats each entry only when there are at
// most max, so a listing of a small directory reads it once, and one of
// a large directory costs no stat per entry.
//
// ListDir reads the directory at name. If it holds at most max names, it
// returns its entries as ReadDir would (though it may leave out entries
// the directory itself types as FIFOs, sockets or devices) and many =
// false, without calling fn. Otherwise it calls fn with each name, as
// NameLister's ListNames does, until fn returns false or the names run
// out, and returns many = true and no entries. Missing: ErrNotExist; a
// file: ErrNotDir, both before fn is called. An implementation that
// cannot (a Wrapper over a store without DirLister) returns an error
// wrapping errors.ErrUnsupported; callers then use ListNames or ReadDir.
// ListDir(ctx, name, 0, fn) lists every name of a directory that has any.
//
// Memory lists with it when the store has it. Like NameLister, a wrapper
// has it only if it opts in, with a ListDir that calls ForwardListDir:
// Forwarder does not forward it.
type DirLister interface {
	ListDir(ctx context.Context, name string, max int, fn func(name string) bool) (entries []FileInfo, many bool, err error)
}

// ForwardListDir calls s's ListDir, or returns Unsupported if s has no
// DirLister.
func ForwardListDir(ctx context.Context, s Store, name string, max int, fn func(name string) bool) ([]FileInfo, bool, error) {
	if d, ok := s.(DirLister); ok {
		return d.ListDir(ctx, name, max, fn)
	}
	return nil, false, Unsupported("listdir", name)
}

// readDir reads the directory dir for a listing by the cheapest means
// the store has: with DirLister, once; with NameLister, its names, and
// then, if they are at most max, its entries (ReadDir), which reads a
// small directory twice; otherwise ReadDir alone (many is false). When
// many, fn has been given every name and entries is nil. A store that
// proves unable to list names is not asked again.
func (l *listing) readDir(dir string, max int, fn func(string) bool) (entries []FileInfo, many bool, err error) {
	if l.names {
		if d, ok := l.m.store.(DirLister); ok {
			entries, many, err = d.ListDir(l.ctx, dir, max, fn)
			if !unsupported(err) {
				return entries, many, err
			}
		}
		if n, ok := l.m.store.(NameLister); ok {
			count := 0
			err = n.ListNames(l.ctx, dir, func(string) bool {
				count++
				return count <= max
			})
			switch {
			case err == nil && count > max:
				return nil, true, n.ListNames(l.ctx, dir, fn)
			case err != nil && !unsupported(err):
				return nil, false, err
			case err == nil:
				entries, err = l.m.store.ReadDir(l.ctx, dir)
				return entries, false, err
			}
		}
		l.names = false
	}
	entries, err = l.m.store.ReadDir(l.ctx, dir)
	return entries, false, err
}
