package history

import (
	"context"
	"errors"
	"path"
	"time"

	"github.com/memtool/memtool"
)

// A Pruned is a version that PruneAged dropped (or, in a dry run, would
// drop).
type Pruned struct {
	Path string // the file's virtual path, /memories/…; "" if its versions' directory does not name it (no path file, or one damaged past reading)
	Version
}

// PruneAged drops, under every path, the versions older than the store's
// MaxAge (none if MaxAge is negative). A change of a path drops its own old versions, so what this
// finds are the versions of files that were not changed since: deleted
// ones above all, whose versions would otherwise stay for good. A
// version's age counts from its time, or from that of a version numbered
// before it if later (see settled): a clock behind does not age one. With
// dryRun it drops nothing and returns what it would drop. Versions are
// dropped one by one; one that another process dropped first is skipped,
// and a version younger than MaxAge is never touched, so a version being
// made meanwhile (it is new) is safe. The trash of deletes in progress is
// left to the deletes.
func (s *Store) PruneAged(ctx context.Context, dryRun bool) ([]Pruned, error) {
	if s.opts.MaxAge < 0 {
		return nil, nil // kept for ever
	}
	now := s.opts.Now()
	var out []Pruned
	err := s.eachPath(ctx, func(dir string, versions []Version) error {
		var old []Version
		for i, t := range settled(versions) {
			if now.Sub(t) > s.opts.MaxAge {
				old = append(old, versions[i])
			}
		}
		if len(old) == 0 {
			return nil
		}
		p := ""
		name, err := s.inner.ReadFile(ctx, path.Join(dir, pathFile), 1<<20)
		switch {
		case err == nil:
			p = memtool.VirtualPath(string(name))
		case errors.Is(err, memtool.ErrTooLarge), errors.Is(err, memtool.ErrIsDir), errors.Is(err, memtool.ErrIrregular):
			// Damaged: it names no path, and stops no pruning.
		case !errors.Is(err, memtool.ErrNotExist):
			return err
		}
		for _, v := range old {
			if !dryRun {
				err := s.inner.Remove(ctx, path.Join(dir, v.entry))
				if errors.Is(err, memtool.ErrNotExist) {
					continue // another process dropped it first
				}
				if err != nil {
					return err
				}
			}
			out = append(out, Pruned{Path: p, Version: v})
		}
		return nil
	})
	return out, err
}

// settled returns the time from which the age of each of versions (a
// path's, by number) counts: its own, or the latest of those numbered
// before it if that is later. Versions are numbered in the order they
// were made, so a version made after another is no older than it, also
// when its own time is earlier: the clock of the process that made it
// was behind. Dropping it by its own time would drop, say, a delete's
// version, the deleted file's only copy, at the first gc after it.
func settled(versions []Version) []time.Time {
	out := make([]time.Time, len(versions))
	for i, v := range versions {
		out[i] = v.Time
		if i > 0 && out[i-1].After(v.Time) {
			out[i] = out[i-1]
		}
	}
	return out
}

// eachPath calls fn with the directory and the versions of every path
// that has versions, in no order, until fn fails.
func (s *Store) eachPath(ctx context.Context, fn func(dir string, versions []Version) error) error {
	dirs, err := s.inner.ReadDir(ctx, DirName)
	if errors.Is(err, memtool.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, d := range dirs {
		dir := path.Join(DirName, d.Name)
		if !d.IsDir() || dir == trashDir || dir == usageDir {
			continue
		}
		versions, err := listVersions(ctx, s.inner, dir)
		if err != nil {
			return err
		}
		if err := fn(dir, versions); err != nil {
			return err
		}
	}
	return nil
}

// MaxAge returns the age past which PruneAged drops a version; negative:
// none is dropped for its age.
func (s *Store) MaxAge() time.Duration { return s.opts.MaxAge }
