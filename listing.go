package memtool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameLister is the optional capability of listing a directory's names
// without examining each entry: a directory store reads them as the
// directory holds them (getdents), without a stat per entry.
//
// ListNames calls fn with each name in the directory at name, in any
// order, until fn returns false or the names run out: the names of the
// files and directories ReadDir returns, and possibly names of entries
// that Stat then reports missing or irregular (a link that leads out, a
// file with several links), never names the store keeps for itself. A
// name fn is given stays valid after fn returns. The names are given as
// they are read, so that a caller that keeps only some of them holds
// only those, whatever the directory's size.
// Missing: ErrNotExist; a file: ErrNotDir, both before fn is called. An
// implementation that cannot (a Wrapper over a store without NameLister)
// returns an error wrapping errors.ErrUnsupported, without calling fn;
// callers then use ReadDir.
//
// Memory lists with it when the store has it, and Stats only the entries
// its listing shows. Forwarder does not forward it: a wrapper whose
// ReadDir changes or hides entries, or records that it listed, would be
// bypassed. A wrapper whose ReadDir passes entries through unchanged, and
// whose Stat applies its policy, opts in with a ListNames that calls
// ForwardListNames.
type NameLister interface {
	ListNames(ctx context.Context, name string, fn func(name string) bool) error
}

// ForwardListNames calls s's ListNames, or returns Unsupported if s has
// no NameLister.
func ForwardListNames(ctx context.Context, s Store, name string, fn func(name string) bool) error {
	if l, ok := s.(NameLister); ok {
		return l.ListNames(ctx, name, fn)
	}
	return Unsupported("listnames", name)
}

// A listing is the text of one directory view being written: lines are
// added in order until the view is known to be cut, so a listing costs
// what it shows, whatever the directory holds.
type listing struct {
	m     *Memory
	ctx   context.Context
	names bool // the store is a DirLister or a NameLister
	once  bool // it is a DirLister: a directory read by names is read once
	// probes is how many more subdirectories may be asked for their
	// names before they are read, where that costs a second read (see
	// walk).
	probes int
	buf    []byte
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
	once := Has[DirLister](m.store)
	l := &listing{m: m, ctx: ctx, names: once || Has[NameLister](m.store), once: once, probes: maxProbes, kept: -1}
	l.buf = append(make([]byte, 0, len(header)+1024), header...)
	l.used = utf8.RuneCountInString(header)
	// The note names p: a long path takes more than viewNoteRoom.
	l.left = m.opts.MaxViewChars - l.used - max(viewNoteRoom, utf8.RuneCountInString(m.listingNote(math.MaxInt, p, math.MaxInt)))
	if err := l.walk(name, VirtualPath(name), 1); err != nil {
		return Result{}, err
	}
	if !l.cut {
		return success(string(l.buf))
	}
	if l.kept < 0 {
		l.kept, l.keptLen = l.lines, len(l.buf)
	}
	return success(string(l.buf[:l.keptLen]) + m.listingNote(l.kept, p, l.topLevelCounts))
}

// listingNote is the note that ends a listing of p cut after kept
// entries, p holding names names.
func (m *Memory) listingNote(kept int, p string, names int) string {
	return fmt.Sprintf("\n\n[Listing cut at %s characters: showing the first %d entries, in the order above; %s itself holds %d names, its subdirectories not counted. View a subdirectory to list it on its own.]",
		formatCount(m.opts.MaxViewChars), kept, p, names)
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

// visible reports whether a listing shows name: not hidden (a dot first,
// node_modules), as the reference handler lists, and showable as one
// line's name (D22).
func visible(name string) bool {
	return !strings.HasPrefix(name, ".") && name != "node_modules" && showable(name)
}

// showable reports whether name can be shown in a listing's line as it is:
// UTF-8, without a control character (a line break would forge a line of
// the listing, a tab a size) or an invisible formatting character (a bidi
// override reorders what the line says). The path gate refuses such names,
// so the model cannot make them; one put in a store by other means (a file
// an operator's program left in a directory store) is left out of
// listings, as the server's resource API leaves it out, and is out of the
// model's reach whatever a listing says.
func showable(name string) bool {
	for i := 0; i < len(name); i++ {
		if b := name[i]; b < 0x20 || b == 0x7f {
			return false
		} else if b >= utf8.RuneSelf {
			return utf8.ValidString(name[i:]) && strings.IndexFunc(name[i:], func(r rune) bool {
				return isControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
			}) < 0
		}
	}
	return true
}

// walk lists the directory dir, whose entries are shown under prefix, and
// below it, while depth < 2, its subdirectories.
func (l *listing) walk(dir, prefix string, depth int) error {
	// The directory viewed (depth 1) is read by names if the store can
	// (readDir): if it holds more names than the view has room for, only
	// the smallest are kept and examined, so that a large directory costs
	// what the view shows of it, not a stat per entry. So are its
	// subdirectories, every one where that reads a directory once
	// (DirLister); where it costs a second read of a small one's names
	// (NameLister alone), only while the view has at most maxProbes of
	// them: with more, each of them has but a small part of the view.
	var (
		es   []FileInfo
		many bool
		err  error
		top  *smallestNames
	)
	if l.names && (depth == 1 || l.once || l.probes > 0) {
		if depth > 1 && !l.once {
			l.probes--
		}
		top = newSmallestNames(l.room(prefix))
		shown := 0
		es, many, err = l.readDir(dir, top.k, func(n string) bool {
			if visible(n) {
				shown++
				top.add(n)
			}
			return true
		})
		if many && depth == 1 {
			l.topLevelCounts = shown
		}
	} else {
		es, err = l.m.store.ReadDir(l.ctx, dir)
	}
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
	if many {
		return l.showNames(dir, prefix, depth, top)
	}
	kept := es[:0]
	for _, fi := range es {
		if visible(fi.Name) && (fi.IsDir() || fi.IsRegular()) {
			kept = append(kept, fi)
		}
	}
	es = kept
	if depth == 1 {
		l.topLevelCounts = len(es)
		if dirs := countDirs(es); dirs > maxProbes {
			l.probes = 0 // each subdirectory has but a small part of the view
		}
	}
	// Sort only as many entries as could be shown.
	if !l.cut {
		k := smallestFirst(es, l.room(prefix), fileInfoName)
		for _, fi := range es[:k] {
			if l.cut {
				break
			}
			if err := l.show(dir, prefix, depth, fi, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func fileInfoName(fi FileInfo) string { return fi.Name }

// maxProbes bounds the subdirectories one view asks for their names
// before reading them (walk); a directory with more subdirectories than
// that has none of them asked.
const maxProbes = 16

func countDirs(es []FileInfo) int {
	n := 0
	for _, fi := range es {
		if fi.IsDir() {
			n++
		}
	}
	return n
}

// showNames shows the directory dir, which holds more names than the
// view has room for, from the smallest of its names, kept in top as
// they were read: it Stats only those it shows. If some turn out to be
// unusable and the view still has room, it reads the names again for
// the next smallest.
func (l *listing) showNames(dir, prefix string, depth int, top *smallestNames) error {
	for {
		batch := top.sorted()
		for _, n := range batch {
			if l.cut {
				return nil
			}
			if err := l.show(dir, prefix, depth, FileInfo{Name: n}, false); err != nil {
				return err
			}
		}
		if l.cut || len(batch) < top.k {
			return nil
		}
		// Some names were unusable and there is room left: the next
		// smallest, after the last one shown.
		after := batch[len(batch)-1]
		top = newSmallestNames(l.room(prefix))
		_, _, err := l.readDir(dir, 0, func(n string) bool {
			if visible(n) && compareNames(n, after) > 0 {
				top.add(n)
			}
			return true
		})
		if err != nil {
			return err
		}
	}
}

// show adds the line of the entry fi of dir and, for a directory while
// depth < 2, the lines of its entries. An entry whose fi is not known
// (only its name is) is Stat'ed first, and left out, as ReadDir would
// leave it out, when it is gone or not usable.
func (l *listing) show(dir, prefix string, depth int, fi FileInfo, known bool) error {
	if !known {
		var err error
		fi, err = l.m.store.Stat(l.ctx, path.Join(dir, fi.Name))
		if err != nil {
			return l.ctx.Err()
		}
	}
	switch {
	case fi.IsDir():
		l.add("4K\t" + prefix + "/" + fi.Name + "/")
		if depth < 2 && !l.cut {
			return l.walk(path.Join(dir, fi.Name), prefix+"/"+fi.Name, depth+1)
		}
	case fi.IsRegular():
		l.add(formatSize(fi.Size) + "\t" + prefix + "/" + fi.Name)
	}
	return nil
}

// compareNames orders names as a listing shows them: by compareUTF16, and
// names it finds equal (invalid UTF-8 decoded alike) by their bytes, so
// that the order is total.
func compareNames(a, b string) int {
	if c := compareUTF16(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// smallestNames keeps the k smallest names it is given (compareNames): a
// max-heap once it holds k, so that each name costs one comparison with
// the largest kept, plus a sift when it replaces it.
type smallestNames struct {
	k    int
	h    []string
	less func(i, j int) bool
}

// newSmallestNames starts small: most directories hold far fewer names
// than a view has room for, and the heap grows only as names come.
func newSmallestNames(k int) *smallestNames {
	s := &smallestNames{k: k, h: make([]string, 0, min(k, 64))}
	s.less = func(i, j int) bool { return compareNames(s.h[i], s.h[j]) < 0 }
	return s
}

func (s *smallestNames) add(name string) {
	switch {
	case len(s.h) < s.k:
		s.h = append(s.h, name)
		if len(s.h) == s.k {
			for i := s.k/2 - 1; i >= 0; i-- {
				siftDown(s.h, i, s.less)
			}
		}
	case compareNames(name, s.h[0]) < 0:
		s.h[0] = name
		siftDown(s.h, 0, s.less)
	}
}

// sorted returns the names kept, smallest first.
func (s *smallestNames) sorted() []string {
	slices.SortFunc(s.h, compareNames)
	return s.h
}

// smallestFirst moves the k smallest elements of s by name (compareNames)
// to its front, sorted, and returns how many that is (k, or len(s) if
// that is less). The rest stay behind them, in no order: a partial sort
// that costs about one comparison per element when k is small.
func smallestFirst[T any](s []T, k int, name func(T) string) int {
	less := func(i, j int) bool { return compareNames(name(s[i]), name(s[j])) < 0 }
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
	slices.SortFunc(s[:k], func(a, b T) int { return compareNames(name(a), name(b)) })
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
