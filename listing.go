package memtool

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// NameLister is the optional capability of listing a directory's names
// without examining each entry: a directory store reads them as the
// directory holds them (getdents), without a stat per entry.
//
// ListNames returns the names in the directory at name, in any order:
// the names of the files and directories ReadDir returns, and possibly
// names of entries that Stat then reports missing or irregular (a link
// that leads out, a file with several links), never names the store keeps
// for itself.
// Missing: ErrNotExist; a file: ErrNotDir. An implementation that cannot
// (a Wrapper over a store without NameLister) returns an error wrapping
// errors.ErrUnsupported; callers then use ReadDir.
//
// Memory lists with it when the store has it, and Stats only the entries
// its listing shows. Forwarder does not forward it: a wrapper whose
// ReadDir changes or hides entries, or records that it listed, would be
// bypassed. A wrapper whose ReadDir passes entries through unchanged, and
// whose Stat applies its policy, opts in with a ListNames that calls
// ForwardListNames.
type NameLister interface {
	ListNames(ctx context.Context, name string) ([]string, error)
}

// ForwardListNames calls s's ListNames, or returns Unsupported if s has
// no NameLister.
func ForwardListNames(ctx context.Context, s Store, name string) ([]string, error) {
	if l, ok := s.(NameLister); ok {
		return l.ListNames(ctx, name)
	}
	return nil, Unsupported("listnames", name)
}

// A listing is the text of one directory view being written: lines are
// added in order until the view is known to be cut, so a listing costs
// what it shows, whatever the directory holds.
type listing struct {
	m     *Memory
	ctx   context.Context
	names bool // the store is a NameLister
	buf   []byte
	// used is the view's length in characters so far. Once the next line
	// would take it over MaxViewChars, cut is set and nothing more is
	// added. kept and keptLen are how many lines fit the budget of a cut
	// view (cutView's rule) and where the view ends after them; left is
	// what they leave of that budget.
	used, left     int
	lines          int
	kept, keptLen  int
	cut            bool
	topLevelCounts int
}

// listDir lists a directory two levels deep, leaving out hidden entries and
// node_modules, as the reference handler does; every directory reads 4K
// (D4) and entry paths are canonical (D5). A listing over MaxViewChars is
// cut (D8), and its note counts the names directly in the directory, not
// every entry (D17): counting those would cost a look at every entry and
// every subdirectory, however little the listing shows.
func (m *Memory) listDir(ctx context.Context, p, name string) (Result, error) {
	header := "Here're the files and directories up to 2 levels deep in " + p + ", excluding hidden items and node_modules:\n4K\t" + p
	l := &listing{m: m, ctx: ctx, names: Has[NameLister](m.store), kept: -1}
	l.buf = append(make([]byte, 0, len(header)+1024), header...)
	l.used = utf8.RuneCountInString(header)
	l.left = m.opts.MaxViewChars - l.used - viewNoteRoom
	if err := l.walk(name, VirtualPath(name), 1); err != nil {
		return Result{}, err
	}
	if !l.cut {
		return success(string(l.buf))
	}
	if l.kept < 0 {
		l.kept, l.keptLen = l.lines, len(l.buf)
	}
	out := fmt.Appendf(l.buf[:l.keptLen], "\n\n[Listing cut at %s characters: showing the first %d entries, in the order above; %s itself holds %d names, its subdirectories not counted. View a subdirectory to list it on its own.]",
		formatCount(m.opts.MaxViewChars), l.kept, p, l.topLevelCounts)
	return success(string(out))
}

// add adds one line, or sets cut if it would take the view over
// MaxViewChars.
func (l *listing) add(line string) {
	size := 1 + utf8.RuneCountInString(line) // a newline and the line
	if l.kept < 0 {
		if size > l.left {
			l.kept, l.keptLen = l.lines, len(l.buf)
		} else {
			l.left -= size
		}
	}
	if l.used+size > l.m.opts.MaxViewChars {
		l.cut = true
		return
	}
	l.used += size
	l.lines++
	l.buf = append(append(l.buf, '\n'), line...)
}

// room is how many more lines under prefix could fit before the view is
// cut: every line is at least a newline, a two-character size, a tab,
// prefix, a slash and a one-character name.
func (l *listing) room(prefix string) int {
	return (l.m.opts.MaxViewChars-l.used)/(6+utf8.RuneCountInString(prefix)) + 1
}

// listed is one entry of a directory being listed: info is exact when
// known is set; otherwise only its name is.
type listed struct {
	info  FileInfo
	known bool
}

func listedName(e listed) string { return e.info.Name }

// entries reads the directory dir, its hidden entries, node_modules and
// (where ReadDir tells) its irregular entries left out. From a NameLister
// it takes the names alone when the directory holds more than room of
// them; a smaller one, which the listing may well show whole, it reads
// with ReadDir, which examines each entry more cheaply than a Stat each.
// Only the directory viewed (depth 1) is asked for its names first: most
// subdirectories are small, and asking each of them would list it twice.
func (l *listing) entries(dir string, room, depth int) ([]listed, error) {
	visible := func(name string) bool { return !strings.HasPrefix(name, ".") && name != "node_modules" }
	if l.names && depth == 1 {
		names, err := l.m.store.(NameLister).ListNames(l.ctx, dir)
		switch {
		case err == nil && len(names) > room:
			out := make([]listed, 0, len(names))
			for _, n := range names {
				if visible(n) {
					out = append(out, listed{info: FileInfo{Name: n}})
				}
			}
			return out, nil
		case unsupported(err):
			l.names = false
		case err != nil:
			return nil, err
		}
	}
	infos, err := l.m.store.ReadDir(l.ctx, dir)
	if err != nil {
		return nil, err
	}
	out := make([]listed, 0, len(infos))
	for _, fi := range infos {
		if visible(fi.Name) && (fi.IsDir() || fi.IsRegular()) {
			out = append(out, listed{info: fi, known: true})
		}
	}
	return out, nil
}

func (l *listing) walk(dir, prefix string, depth int) error {
	es, err := l.entries(dir, l.room(prefix), depth)
	if err != nil {
		if depth > 1 && (errors.Is(err, ErrNotExist) || errors.Is(err, ErrNotDir)) {
			return nil // removed while we listed
		}
		if depth > 1 && l.ctx.Err() == nil {
			// One subdirectory that cannot be read (an I/O error, say)
			// does not hide the rest of the listing.
			l.m.opts.Logger.WarnContext(l.ctx, "memtool: listing a subdirectory failed; listed without its entries", "path", prefix, "err", err)
			return nil
		}
		return err
	}
	if depth == 1 {
		l.topLevelCounts = len(es)
	}
	// Sort only as many entries as could be shown, more when some turn
	// out to be unusable.
	for start := 0; start < len(es) && !l.cut; {
		k := smallestFirst(es[start:], l.room(prefix), listedName)
		for i := start; i < start+k && !l.cut; i++ {
			e := es[i]
			if !e.known {
				fi, err := l.m.store.Stat(l.ctx, path.Join(dir, e.info.Name))
				if err != nil {
					if l.ctx.Err() != nil {
						return l.ctx.Err()
					}
					continue // gone meanwhile, or not usable: left out as ReadDir would
				}
				e.info = fi
			}
			switch {
			case e.info.IsDir():
				l.add("4K\t" + prefix + "/" + e.info.Name + "/")
				if depth < 2 && !l.cut {
					if err := l.walk(path.Join(dir, e.info.Name), prefix+"/"+e.info.Name, depth+1); err != nil {
						return err
					}
				}
			case e.info.IsRegular():
				l.add(formatSize(e.info.Size) + "\t" + prefix + "/" + e.info.Name)
			}
		}
		start += k
	}
	return nil
}

// smallestFirst moves the k smallest elements of s by name (compareUTF16)
// to its front, sorted, and returns how many that is (k, or len(s) if
// that is less). The rest stay behind them, in no order: a partial sort
// that costs about one comparison per element when k is small.
func smallestFirst[T any](s []T, k int, name func(T) string) int {
	less := func(i, j int) bool { return compareUTF16(name(s[i]), name(s[j])) < 0 }
	if k >= len(s) {
		k = len(s)
	} else {
		// A max-heap of the k smallest so far in s[:k].
		for i := k/2 - 1; i >= 0; i-- {
			siftDown(s[:k], i, less)
		}
		for i := k; i < len(s); i++ {
			if less(i, 0) {
				s[0], s[i] = s[i], s[0]
				siftDown(s[:k], 0, less)
			}
		}
	}
	slices.SortFunc(s[:k], func(a, b T) int { return compareUTF16(name(a), name(b)) })
	return k
}

// siftDown restores the max-heap h (by less, on indices of the whole
// slice h is the front of) from i down.
func siftDown[T any](h []T, i int, less func(i, j int) bool) {
	for {
		big := i
		if l := 2*i + 1; l < len(h) && less(big, l) {
			big = l
		}
		if r := 2*i + 2; r < len(h) && less(big, r) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}
