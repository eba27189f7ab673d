package expiry

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memtool/memtool"
)

// CollectOptions configure Collect.
type CollectOptions struct {
	// UnusedFor: a file not read or written for this long expires. It
	// may not be below Resolution.
	UnusedFor time.Duration
	// Resolution is the largest Options.Resolution of the wrappers that
	// record accesses in the store. Default DefaultResolution, the
	// wrapper's default.
	Resolution time.Duration
	// Grace: expired files stay in the trash, restorable, this long.
	// Default 7 days.
	Grace time.Duration
	// DryRun reports what would happen and changes nothing.
	DryRun bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// An Expired file is one Collect moved to the trash (or would have).
type Expired struct {
	Path     string    // the virtual path
	LastUsed time.Time // the last access recorded
}

// A Purged batch is one earlier run's trash, removed for good.
type Purged struct {
	Expired time.Time // when that run expired its files
	Paths   []string  // the virtual paths it held
}

// A Report is what Collect did (or, with DryRun, would do), sorted by
// path.
type Report struct {
	Expired []Expired
	Purged  []Purged
}

// stampLayout names a trash batch by the time of the run that made it.
// Its year has four digits: lastStamp is the latest time it names.
const stampLayout = "20060102T150405Z"

var lastStamp = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// firstPlausible is the earliest use a recorded access may stand for:
// one before it (zero, 1970, negative) is a damaged index's, or an older
// build's bug, not a use, and would expire its file at once.
var firstPlausible = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// plausible reports whether t, a recorded access, may be a use; Collect
// takes a file whose access is not for one with none.
func plausible(t int64) bool { return t >= firstPlausible.Unix() && t <= lastStamp.Unix() }

// ErrBelowResolution: CollectOptions.UnusedFor is shorter than the
// resolution of the access index, which cannot tell such ages apart.
var ErrBelowResolution = errors.New("below the resolution of the access index")

// Collect expires the files of inner (the store the tracking wrapper
// wraps) that were not used for opts.UnusedFor: it moves them into the
// trash, where Restore can bring them back, and removes trash batches older
// than the grace period. A file with no recorded access (written before
// tracking began, or by something else), or with one before 2000 or past
// 9999 (a damaged index), counts as used now: it is recorded
// (at the latest access in the index if that is later, written by a clock
// ahead of this one) and expires only after UnusedFor from now. Directories are left in place.
//
// A wrapper records a use only if it recorded none within its Resolution,
// and in whole seconds, so a file may have been used up to Resolution and
// a second after its recorded access. Collect counts that in: it never
// expires a file used less than UnusedFor ago, and expires a file at the
// latest UnusedFor + Resolution + 1s after its last use. An UnusedFor
// below Resolution fails with an error wrapping ErrBelowResolution.
func Collect(ctx context.Context, inner memtool.Store, opts CollectOptions) (Report, error) {
	var rep Report
	if opts.UnusedFor <= 0 {
		return rep, errors.New("expiry: UnusedFor must be positive")
	}
	if opts.Resolution <= 0 {
		opts.Resolution = DefaultResolution
	}
	if opts.UnusedFor < opts.Resolution {
		return rep, fmt.Errorf("expiry: unused for %v: %w (%v); the access times are that coarse, so a file used within %v could look older", opts.UnusedFor, ErrBelowResolution, opts.Resolution, opts.Resolution)
	}
	// A use up to slack after the recorded access may be unrecorded.
	slack := opts.Resolution + time.Second
	if opts.Grace <= 0 {
		opts.Grace = 7 * 24 * time.Hour
	}
	now := time.Now()
	if opts.Now != nil {
		now = opts.Now()
	}
	now = now.UTC().Truncate(time.Second)
	ix, err := readIndex(ctx, inner)
	if err != nil {
		return rep, fmt.Errorf("expiry: reading the index: %w", err)
	}
	var expired, unseen []string
	var found []Expired       // the files due, as the report lists them
	due := map[string]int64{} // the recorded access of each expired file, as read
	files := map[string]bool{}
	err = walkFiles(ctx, inner, "", func(name string, _ memtool.FileInfo) error {
		files[name] = true
		t, ok := ix.Access[name]
		switch {
		case !ok || !plausible(t):
			unseen = append(unseen, name)
		case now.Sub(time.Unix(t, 0)) >= opts.UnusedFor+slack:
			expired = append(expired, name)
			due[name] = t
			found = append(found, Expired{Path: memtool.VirtualPath(name), LastUsed: time.Unix(t, 0).UTC()})
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	slices.SortFunc(found, func(a, b Expired) int { return strings.Compare(a.Path, b.Path) })
	batches, err := trashBatches(ctx, inner)
	if err != nil {
		return rep, err
	}
	var purge []Purged
	var purgeDirs []string
	for _, b := range batches {
		if now.Sub(b.when) >= opts.Grace {
			p := Purged{Expired: b.when}
			walkFiles(ctx, inner, path.Join(trashName, b.dir), func(name string, _ memtool.FileInfo) error {
				p.Paths = append(p.Paths, memtool.VirtualPath(strings.TrimPrefix(name, path.Join(trashName, b.dir)+"/")))
				return nil
			})
			slices.Sort(p.Paths)
			purge = append(purge, p)
			purgeDirs = append(purgeDirs, path.Join(trashName, b.dir))
		}
	}
	if opts.DryRun {
		return Report{Expired: found, Purged: purge}, nil
	}
	// The batches past their grace go first: on a full disk, removing
	// them frees the space that the moves and the index need, and no
	// failure of those keeps them.
	var purgeErr error
	for i, p := range purge {
		err := memtool.RemoveAll(ctx, inner, purgeDirs[i])
		if errors.Is(err, memtool.ErrNotExist) {
			continue // purged by another run meanwhile
		}
		if err != nil {
			purgeErr = fmt.Errorf("expiry: purging the trash: %w", err)
			break
		}
		rep.Purged = append(rep.Purged, p)
	}

	// A file used since the index was read is not expired: a wrapper
	// records a write before it writes, so a use that may have reached a
	// file before its move is in the index after the move, and the file
	// goes back. The index is read before the moves too, to leave the
	// files used during the walk where they are.
	batch := path.Join(trashName, batchTime(now, ix, batches).Format(stampLayout))
	var moved []string
	unused := func(ix index, name string) bool {
		t, ok := ix.Access[name]
		return ok && t == due[name]
	}
	// The report lists only what is in the trash when Collect returns,
	// and only the batches it purged.
	report := func(inTrash []string) {
		in := map[string]bool{}
		for _, name := range inTrash {
			in[memtool.VirtualPath(name)] = true
		}
		rep.Expired = slices.DeleteFunc(found, func(e Expired) bool { return !in[e.Path] })
	}
	again, err := readIndex(ctx, inner)
	if err != nil {
		return rep, errors.Join(purgeErr, fmt.Errorf("expiry: reading the index: %w", err))
	}
	var moveErr error // the moves stop here; those made are checked still
	for _, name := range expired {
		if !unused(again, name) {
			continue
		}
		err := move(ctx, inner, name, path.Join(batch, name))
		if errors.Is(err, memtool.ErrNotExist) {
			continue // removed meanwhile
		}
		if errors.Is(err, memtool.ErrExist) || errors.Is(err, memtool.ErrNotDir) {
			continue // its place in the batch is taken (see batchTime): it stays
		}
		if err != nil {
			moveErr = fmt.Errorf("expiry: moving %s to the trash: %w", memtool.VirtualPath(name), err)
			break
		}
		moved = append(moved, name)
	}
	var used, kept []string
	after, err := readIndex(context.WithoutCancel(ctx), inner)
	if err != nil {
		// Which were used is unknown: none expires.
		used = moved
		moveErr = errors.Join(moveErr, fmt.Errorf("expiry: reading the index: %w", err))
	} else {
		for _, name := range moved {
			if unused(after, name) {
				kept = append(kept, name)
			} else {
				used = append(used, name)
			}
		}
	}
	left, err := putBack(ctx, inner, batch, used)
	moved = append(kept, left...)
	report(moved)
	if err := errors.Join(purgeErr, moveErr, err); err != nil {
		return rep, err
	}
	err = updateIndex(ctx, inner, func(ix *index) {
		for _, name := range moved {
			if unused(*ix, name) {
				delete(ix.Access, name)
			}
		}
		// Forget files that are gone. One created since the walk is
		// forgotten too, and recorded as new by the next run.
		for name := range ix.Access {
			if !files[name] {
				delete(ix.Access, name)
			}
		}
		first := laterOf(now, *ix).Unix()
		for _, name := range unseen {
			if t, ok := ix.Access[name]; !ok || !plausible(t) {
				ix.Access[name] = first
			}
		}
	})
	if err != nil {
		return rep, errors.Join(purgeErr, fmt.Errorf("expiry: writing the index: %w", err))
	}
	return rep, purgeErr
}

// laterOf returns now, or the latest access recorded in ix if that is
// later: recorded by a process whose clock was ahead of this one's. It is
// the time Collect records as a first use, so that a gc whose clock is
// behind does not record one that the next gc takes for older than it is
// and expires early. It only ever makes a time later: the expiring and
// the purging are decided by now. A time that is not plausible is no
// clock's: past lastStamp, a batch named by it would not read back as one.
func laterOf(now time.Time, ix index) time.Time {
	for _, t := range ix.Access {
		if u := time.Unix(t, 0).UTC(); u.After(now) && plausible(t) {
			now = u
		}
	}
	return now
}

// batchTime names the batch of a run at now: now, or later (see laterOf),
// and a second after the newest batch of the trash (oldest first) if that
// is not before, so that the last batch made is the newest, the one
// Restore brings a file back from, and a gc whose clock is behind names
// no batch that the next gc takes for older than it is and purges before
// the grace period ends.
func batchTime(now time.Time, ix index, batches []trashBatch) time.Time {
	now = laterOf(now, ix)
	if n := len(batches); n > 0 && !batches[n-1].when.Before(now) {
		now = batches[n-1].when.Add(time.Second)
	}
	if now.After(lastStamp) {
		// That batch, the newest, takes this run's files too; one whose
		// place in it is taken, by a file or a directory expired before,
		// is not expired (Collect goes on without it).
		now = lastStamp
	}
	return now
}

// putBack moves the files that Collect moved into batch back to their
// places, and returns those left in the trash: one whose place was taken
// meanwhile (a new file written there) stays, restorable, and so does one
// whose move failed. One no longer in the trash was restored meanwhile.
func putBack(ctx context.Context, inner memtool.Store, batch string, names []string) (left []string, err error) {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for _, name := range names {
		src := path.Join(batch, name)
		err := move(ctx, inner, src, name)
		if errors.Is(err, memtool.ErrNotExist) {
			if _, serr := inner.Stat(ctx, src); errors.Is(serr, memtool.ErrNotExist) {
				continue // restored
			}
		}
		switch {
		case errors.Is(err, memtool.ErrExist):
			left = append(left, name)
		case err != nil:
			left = append(left, name)
			errs = append(errs, fmt.Errorf("expiry: putting %s back from the trash: %w", memtool.VirtualPath(name), err))
		}
	}
	return left, errors.Join(errs...)
}

type trashBatch struct {
	dir  string
	when time.Time
}

// trashBatches lists the trash's batches, oldest first.
func trashBatches(ctx context.Context, inner memtool.Store) ([]trashBatch, error) {
	entries, err := inner.ReadDir(ctx, trashName)
	if errors.Is(err, memtool.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []trashBatch
	for _, e := range entries {
		if t, err := time.Parse(stampLayout, e.Name); err == nil && e.IsDir() {
			out = append(out, trashBatch{e.Name, t})
		}
	}
	slices.SortFunc(out, func(a, b trashBatch) int { return a.when.Compare(b.when) })
	return out, nil
}

// A Trashed file is one in the trash.
type Trashed struct {
	Path    string    // its virtual path before it expired
	Expired time.Time // when it expired
}

// Trash lists the files in the trash of inner, oldest batch first.
func Trash(ctx context.Context, inner memtool.Store) ([]Trashed, error) {
	batches, err := trashBatches(ctx, inner)
	if err != nil {
		return nil, err
	}
	var out []Trashed
	for _, b := range batches {
		prefix := path.Join(trashName, b.dir) + "/"
		err := walkFiles(ctx, inner, path.Join(trashName, b.dir), func(name string, _ memtool.FileInfo) error {
			out = append(out, Trashed{Path: memtool.VirtualPath(strings.TrimPrefix(name, prefix)), Expired: b.when})
			return nil
		})
		if err != nil && !errors.Is(err, memtool.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// ErrNotInTrash: Restore found no expired file at that path.
var ErrNotInTrash = errors.New("not in the trash")

// Restore moves the most recently expired file at the virtual path p back
// from the trash of inner. It fails with an error wrapping memtool.ErrExist
// if something is at p again, and with ErrNotInTrash if p is not in the
// trash. The file counts as used now.
func Restore(ctx context.Context, inner memtool.Store, p string, now time.Time) (Trashed, error) {
	for {
		src, t, err := Find(ctx, inner, p)
		if err != nil {
			return Trashed{}, err
		}
		name, _, _ := memtool.CleanPath(p)
		if _, err := inner.Stat(ctx, name); err == nil {
			return Trashed{}, fmt.Errorf("restore %s: %w", p, memtool.ErrExist)
		}
		// The use is recorded before the move, as the wrapper records a
		// write: a restore that cannot record it changes nothing, and
		// one whose move fails leaves only an access of a missing file,
		// which the next Collect forgets.
		if err := updateIndex(ctx, inner, func(ix *index) { ix.use(name, now.Unix()) }); err != nil {
			return Trashed{}, fmt.Errorf("restore %s: recording the use: %w", p, err)
		}
		if err := move(ctx, inner, src, name); err != nil {
			if _, serr := inner.Stat(ctx, src); errors.Is(err, memtool.ErrNotExist) && errors.Is(serr, memtool.ErrNotExist) {
				continue // purged meanwhile: an older batch may hold it
			}
			return Trashed{}, fmt.Errorf("restore %s: %w", p, err)
		}
		return t, nil
	}
}

// Find returns where in inner the most recently expired file at the
// virtual path p is kept, and what Restore would answer for it, for a
// caller that brings it back its own way (memtool restore writes it back
// through the policies in force, then removes it from the trash). It
// fails with ErrNotInTrash if p is not in the trash.
func Find(ctx context.Context, inner memtool.Store, p string) (string, Trashed, error) {
	name, dir, err := memtool.CleanPath(p)
	if err != nil {
		return "", Trashed{}, err
	}
	if name != "" && !dir {
		batches, err := trashBatches(ctx, inner)
		if err != nil {
			return "", Trashed{}, err
		}
		for i := len(batches) - 1; i >= 0; i-- {
			src := path.Join(trashName, batches[i].dir, name)
			if fi, err := inner.Stat(ctx, src); err == nil && fi.IsRegular() {
				return src, Trashed{Path: memtool.VirtualPath(name), Expired: batches[i].when}, nil
			}
		}
	}
	return "", Trashed{}, fmt.Errorf("restore %s: %w", p, ErrNotInTrash)
}

// move moves the file src to dst, creating dst's parents, with
// memtool.Move: the inner store's rename if it has one, else by copying and
// removing.
func move(ctx context.Context, inner memtool.Store, src, dst string) error {
	if _, err := memtool.MkdirAll(ctx, inner, path.Dir(dst)); err != nil {
		return err
	}
	return memtool.Move(ctx, inner, src, dst, 1<<40)
}
