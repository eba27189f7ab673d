package history

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/memtool/memtool"
)

// DefaultMaxBytes is the default of Options.MaxBytes: 64 MiB of versions
// per store (per tenant).
const DefaultMaxBytes = 64 << 20

// Versions stay below every quota of the wrapper's callers, so without a
// bound of their own a model could fill the disk through them: a file
// edited and deleted under one new name after another keeps versions of
// ever more paths, each within MaxVersions. MaxBytes bounds them all.
//
// Adding up every version at each change would cost a listing per path
// that ever had a version, so the store keeps a usage counter: the bytes
// of versions, as counted at the last count plus every version kept
// since (a version dropped is not taken off). Each version is added
// after it is written; when a change finds the counter past MaxBytes, it
// counts the versions for real, drops the oldest, and sets the counter
// to what it counted. The counter thus never says less than the versions
// hold, but for a process that died between writing a version and
// adding it (one version each, until the next count); and a count that
// finds another count settled the counter meanwhile leaves that one's.
//
// The counter lives in a directory of its own, usageDir, as a path's
// counter does, since older memtools and tools that copy a store take
// every directory under DirName but the trash for a path's.
const (
	usageDir  = DirName + "/usage"
	usageFile = usageDir + "/" + counterFile
	// unknownUsage stands for a counter that does not parse: past any
	// bound, so that the next change counts.
	unknownUsage = 1 << 62
)

// A usage is the counter's content: "<generation> <bytes>". The
// generation grows at each count, so that a count can tell whether
// another one settled the counter while it walked.
type usage struct{ gen, bytes int64 }

func parseUsage(data []byte) (usage, bool) {
	g, b, ok := strings.Cut(string(data), " ")
	gen, err1 := strconv.ParseInt(g, 10, 64)
	bytes, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || gen < 0 || bytes < 0 {
		return usage{}, false
	}
	return usage{gen, bytes}, true
}

func (u usage) encode() []byte { return fmt.Appendf(nil, "%d %d", u.gen, u.bytes) }

// countSteps: a version smaller than MaxBytes/countSteps is counted by
// sampling (see count).
const countSteps = 256

// count adds n bytes, a version just written, to the usage counter,
// creating it (by counting) if there is none.
//
// Updating the counter for every version would cost each change one
// more durable write (two fsyncs on a directory store). So a version
// smaller than step, a 256th of MaxBytes, is added as step, with the
// probability n/step, and otherwise not at all: the counter's expected
// growth is still the versions' bytes, whichever process keeps them and
// however short-lived it is, while it is written about once for each
// step of new versions. The sampling only decides when the next full
// count comes (near the bound, the counter is off by about a sixteenth
// of MaxBytes, one standard deviation), and that count is exact.
func (s *Store) count(ctx context.Context, n int64) error {
	if s.opts.MaxBytes < 0 {
		return nil
	}
	if step := max(s.opts.MaxBytes/countSteps, 1); n < step {
		if rand.Int64N(step) >= n {
			return nil
		}
		n = step
	}
	ctx = context.WithoutCancel(ctx) // the version is written: count it
	add := func(old []byte) ([]byte, error) {
		u, ok := parseUsage(old)
		if !ok {
			u = usage{bytes: unknownUsage}
		}
		u.bytes = min(u.bytes+n, unknownUsage)
		return u.encode(), nil
	}
	err := s.inner.Update(ctx, usageFile, 1<<10, add)
	if !errors.Is(err, memtool.ErrNotExist) {
		return err
	}
	if err := s.startCounter(ctx); err != nil {
		return err
	}
	return s.inner.Update(ctx, usageFile, 1<<10, add)
}

// startCounter makes the usage counter where there is none (a store from
// before it, or a new one) by counting what is there, the version just
// kept included, which count may then add again, as a count may (see
// count).
func (s *Store) startCounter(ctx context.Context) error {
	_, total, err := s.allVersions(ctx)
	if err != nil {
		return err
	}
	if _, err := memtool.MkdirAll(ctx, s.inner, usageDir); err != nil {
		return err
	}
	err = s.inner.WriteFile(ctx, usageFile, usage{gen: 1, bytes: total}.encode(), memtool.CreateOnly)
	if err != nil && !errors.Is(err, memtool.ErrExist) {
		return err
	}
	return nil
}

// bound drops the oldest versions of the store, of any path, if the
// usage counter says the versions pass MaxBytes, once the change that
// kept entry has taken effect. Versions kept at or after entry's time
// are never dropped: entry, and those of changes under way in other
// processes, which may not have taken effect yet.
func (s *Store) bound(ctx context.Context, entry string) {
	own, ok := parseVersion(path.Base(entry))
	if s.opts.MaxBytes < 0 || !ok {
		return
	}
	ctx = context.WithoutCancel(ctx)
	data, err := s.inner.ReadFile(ctx, usageFile, 1<<10)
	if errors.Is(err, memtool.ErrNotExist) {
		// count left the version out (see count) or failed to make the
		// counter; in a store with versions from before the counter,
		// the bound must hold from the first change on.
		if err := s.startCounter(ctx); err != nil {
			s.report(err)
			return
		}
		data, err = s.inner.ReadFile(ctx, usageFile, 1<<10)
	}
	if err != nil {
		// A counter that cannot be read (damaged past the size of one,
		// or sealed by an encrypting store below under a key this
		// process lacks) is counted again and replaced, as one that
		// does not parse (data is nil): giving up would leave the store
		// unbounded for good. OnError hears of it: a key may be missing.
		s.report(fmt.Errorf("history: the usage counter cannot be read, so the versions are counted again: %w", err))
		data = nil
	}
	u, ok := parseUsage(data)
	if ok && u.bytes <= s.opts.MaxBytes {
		return
	}
	s.report(s.shrink(ctx, own, u, err != nil))
}

// errRecounted: another count settled the usage counter meanwhile.
var errRecounted = errors.New("counted meanwhile")

// shrink counts the versions, drops the oldest ones older than own until
// they hold nine tenths of MaxBytes (so that the next changes do not
// each count again), and sets the counter, which held u before the
// count, to what is left plus what was added since. If the counter could
// not be read (unreadable) and its update fails too, it is replaced by
// what is left: what other processes added meanwhile is lost to it, one
// version each, as for a process that dies before counting (see count).
func (s *Store) shrink(ctx context.Context, own Version, u usage, unreadable bool) error {
	all, total, err := s.allVersions(ctx)
	if err != nil {
		return err
	}
	if total > s.opts.MaxBytes {
		target := s.opts.MaxBytes - s.opts.MaxBytes/10
		slices.SortFunc(all, func(a, b located) int { return a.Time.Compare(b.Time) })
		for _, v := range all {
			if total <= target || !v.Time.Before(own.Time) {
				break
			}
			err := s.inner.Remove(ctx, path.Join(v.dir, v.entry))
			if err != nil && !errors.Is(err, memtool.ErrNotExist) { // ErrNotExist: another process dropped it first
				return err // the counter stays past the bound: the next change goes on
			}
			total -= v.Size
		}
	}
	err = s.inner.Update(ctx, usageFile, 1<<10, func(old []byte) ([]byte, error) {
		cur, ok := parseUsage(old)
		switch {
		case !ok:
			return usage{gen: 1, bytes: total}.encode(), nil
		case cur.gen != u.gen:
			return nil, errRecounted
		}
		return usage{gen: cur.gen + 1, bytes: max(cur.bytes-u.bytes, 0) + total}.encode(), nil
	})
	switch {
	case errors.Is(err, errRecounted) || errors.Is(err, memtool.ErrNotExist):
		return nil
	case err != nil && unreadable:
		// A generation no count has handed out, so that a count under
		// way elsewhere, which read the old counter, finds it settled.
		fresh := usage{gen: rand.Int64N(1<<62) + 1, bytes: total}
		return s.inner.WriteFile(ctx, usageFile, fresh.encode(), memtool.Replace)
	}
	return err
}

// A located version is one of the store's, with its path's directory.
type located struct {
	dir string
	Version
}

// allVersions lists every version of the store and adds up their sizes.
func (s *Store) allVersions(ctx context.Context) ([]located, int64, error) {
	var out []located
	var total int64
	err := s.eachPath(ctx, func(dir string, versions []Version) error {
		for _, v := range versions {
			out = append(out, located{dir, v})
			total += v.Size
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
