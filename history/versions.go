package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
)

// Each file path that has versions has a directory under DirName, named
// by a hash of the path, holding the path itself (pathFile), the last
// version number handed out (counterFile) and the versions, each named
// "<number>-<unix nanoseconds>-<operation>".
const (
	pathFile    = "path"
	counterFile = "counter"
)

// fileDir is the directory of name's versions.
func fileDir(name string) string {
	sum := sha256.Sum256([]byte(name))
	return path.Join(DirName, hex.EncodeToString(sum[:16]))
}

// claim hands out a new version number of name and returns the entry that
// a version with it is stored at (not yet written). Numbers come from a
// counter advanced with an atomic Update, so two processes never get the
// same number, and no number is handed out twice, even after its version
// was pruned: claiming a free name instead would let a process that fell
// behind reuse a pruned number, and its version, the newest, would sort
// among the oldest.
func (s *Store) claim(ctx context.Context, name, op string) (string, error) {
	dir := fileDir(name)
	n, err := s.next(ctx, dir)
	if errors.Is(err, memtool.ErrNotExist) {
		if err = s.initDir(ctx, dir, name); err == nil {
			n, err = s.next(ctx, dir)
		}
	}
	if err != nil {
		return "", err
	}
	return path.Join(dir, fmt.Sprintf("%06d-%d-%s", n, s.opts.Now().UnixNano(), op)), nil
}

// next advances the counter of dir and returns its new value, which is
// above every version in dir too: a memtool from before counters (it
// numbered a version one above the highest there and left the counter as
// it was) may share the store, and a number from a counter behind its
// versions would be one already kept.
func (s *Store) next(ctx context.Context, dir string) (int, error) {
	counter := path.Join(dir, counterFile)
	kept, err := highest(ctx, s.inner, dir)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.inner.Update(ctx, counter, 32, func(old []byte) ([]byte, error) {
		last, err := strconv.Atoi(string(old))
		if err != nil || last < 0 {
			return nil, fmt.Errorf("history: %s holds %q, not a version number", counter, old)
		}
		if max(last, kept) == math.MaxInt { // damaged: the next would wrap round
			return nil, fmt.Errorf("history: no version number is left after %d (%s holds %q): damaged", math.MaxInt, counter, old)
		}
		n = max(last, kept) + 1 // the call whose result is stored is the last one
		return strconv.AppendInt(nil, int64(n), 10), nil
	})
	return n, err
}

// highest is the highest number of a version in dir, 0 if none.
func highest(ctx context.Context, inner memtool.Store, dir string) (int, error) {
	versions, err := listVersions(ctx, inner, dir)
	if err != nil || len(versions) == 0 {
		return 0, err
	}
	return versions[len(versions)-1].N, nil
}

// initDir creates the directory of name's versions with its path file and
// counter. The counter starts after the highest version already there
// (from a memtool that numbered versions without one).
func (s *Store) initDir(ctx context.Context, dir, name string) error {
	if _, err := memtool.MkdirAll(ctx, s.inner, dir); err != nil {
		return err
	}
	err := s.inner.WriteFile(ctx, path.Join(dir, pathFile), []byte(name), memtool.CreateOnly)
	if err != nil && !errors.Is(err, memtool.ErrExist) {
		return err
	}
	last, err := highest(ctx, s.inner, dir)
	if err != nil {
		return err
	}
	err = s.inner.WriteFile(ctx, path.Join(dir, counterFile), strconv.AppendInt(nil, int64(last), 10), memtool.CreateOnly)
	if err != nil && !errors.Is(err, memtool.ErrExist) {
		return err
	}
	return nil
}

// save writes data as a new version of name and returns its entry. A
// write that failed may have been made (its answer lost): it is removed,
// since the change it was for will not be made.
func (s *Store) save(ctx context.Context, name string, data []byte, op string) (string, error) {
	entry, err := s.claim(ctx, name, op)
	if err != nil {
		return "", err
	}
	if err := s.inner.WriteFile(ctx, entry, data, memtool.CreateOnly); err != nil {
		if !errors.Is(err, memtool.ErrExist) { // not ours to remove
			s.drop(ctx, entry)
		}
		return "", err
	}
	s.report(s.count(ctx, int64(len(data))))
	return entry, nil
}

func (s *Store) drop(ctx context.Context, entry string) {
	s.inner.Remove(context.WithoutCancel(ctx), entry)
}

// prune drops versions of name beyond MaxVersions or older than MaxAge,
// and then the store's oldest if they pass MaxBytes (see bound), as the
// caller sees them once its own version, entry, is in place: it
// looks only at the versions numbered up to entry's. A version numbered
// above it may be another writer's that is not settled yet (saved before
// its change, and dropped again if the change fails), so it must not push
// a settled version out; its own writer prunes once its change is made.
// Version numbers only grow, so a version with MaxVersions versions
// numbered above it is not among the newest MaxVersions, whatever other
// processes do meanwhile.
func (s *Store) prune(ctx context.Context, name, entry string) {
	ctx = context.WithoutCancel(ctx)
	dir := fileDir(name)
	versions, err := listVersions(ctx, s.inner, dir)
	if err != nil {
		s.report(err)
		return
	}
	v, ok := parseVersion(path.Base(entry))
	if !ok {
		return // not a version's entry: nothing is known to be settled
	}
	own := v.N
	for len(versions) > 0 && versions[len(versions)-1].N > own {
		versions = versions[:len(versions)-1]
	}
	now, ages := s.opts.Now(), settled(versions)
	for i, v := range versions {
		tooMany := len(versions)-i > s.opts.MaxVersions
		tooOld := s.opts.MaxAge > 0 && now.Sub(ages[i]) > s.opts.MaxAge
		if tooMany || tooOld {
			if err := s.inner.Remove(ctx, path.Join(dir, v.entry)); !errors.Is(err, memtool.ErrNotExist) {
				s.report(err) // ErrNotExist: another process pruned it first
			}
		}
	}
	s.bound(ctx, entry)
}

// A Version is an earlier content of a file.
type Version struct {
	N    int       // counts up from 1 per path; never reused, also after pruning
	Time time.Time // when it was replaced
	Op   string    // what replaced it: "update" (an edit, or a create that overwrote it), "write" (a whole-file write, such as a revert), "delete"
	Size int64

	entry string
}

func listVersions(ctx context.Context, inner memtool.Store, dir string) ([]Version, error) {
	entries, err := inner.ReadDir(ctx, dir)
	if errors.Is(err, memtool.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Version
	for _, e := range entries {
		if v, ok := parseVersion(e.Name); ok && e.IsRegular() {
			v.Size = e.Size
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b Version) int { return a.N - b.N })
	return out, nil
}

// parseVersion reads a version's entry name, as claim makes it
// (number-time-op); ok is false for any other name. The time is negative
// for a clock before 1970, so it is what lies between the first and the
// last dash (no operation holds one).
func parseVersion(entry string) (v Version, ok bool) {
	num, rest, ok1 := strings.Cut(entry, "-")
	i := strings.LastIndexByte(rest, '-')
	if !ok1 || i < 0 {
		return Version{}, false
	}
	n, err1 := strconv.Atoi(num)
	ns, err2 := strconv.ParseInt(rest[:i], 10, 64)
	if err1 != nil || err2 != nil {
		return Version{}, false
	}
	return Version{N: n, Time: time.Unix(0, ns).UTC(), Op: rest[i+1:], entry: entry}, true
}

// Versions lists the kept versions of the file at the virtual path p in
// inner (the store the wrapper wraps), oldest first. The version of a
// delete that a crash cut off part way is listed once the wrapper has
// finished it (Store.Settle, or any change through it).
func Versions(ctx context.Context, inner memtool.Store, p string) ([]Version, error) {
	name, err := fileName(p)
	if err != nil {
		return nil, err
	}
	return listVersions(ctx, inner, fileDir(name))
}

// ErrNoVersion: no kept version has that number.
var ErrNoVersion = errors.New("no such version")

// Read returns version n of the file at the virtual path p, whatever its
// size; ReadLimit bounds it.
func Read(ctx context.Context, inner memtool.Store, p string, n int) ([]byte, error) {
	return ReadLimit(ctx, inner, p, n, 1<<40)
}

// ReadLimit returns version n of the file at the virtual path p. A
// version larger than limit bytes is not read: memtool.ErrTooLarge. A
// number that more than one version holds (damaged) fails, naming it.
func ReadLimit(ctx context.Context, inner memtool.Store, p string, n int, limit int64) ([]byte, error) {
	name, err := fileName(p)
	if err != nil {
		return nil, err
	}
	versions, err := listVersions(ctx, inner, fileDir(name))
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(versions, func(v Version) bool { return v.N == n })
	switch {
	case i < 0:
		return nil, fmt.Errorf("%s version %d: %w", p, n, ErrNoVersion)
	case i+1 < len(versions) && versions[i+1].N == n:
		// Damaged (a copy gone wrong, an older build racing): which
		// content is meant is unknown, and a guess may be the wrong one.
		return nil, fmt.Errorf("%s version %d: more than one version holds that number (damaged); which one is meant is unknown", p, n)
	case versions[i].Size > limit:
		return nil, fmt.Errorf("%s version %d is %d bytes, more than %d: %w", p, n, versions[i].Size, limit, memtool.ErrTooLarge)
	}
	data, err := inner.ReadFile(ctx, path.Join(fileDir(name), versions[i].entry), limit)
	if errors.Is(err, memtool.ErrNotExist) {
		// Pruned since it was listed (by another process).
		return nil, fmt.Errorf("%s version %d: %w", p, n, ErrNoVersion)
	}
	return data, err
}

// Revert makes version n the content of the file at the virtual path p,
// through store (the wrapper, so that the content it replaces is kept as a
// version too). A deleted file is created again, with its parent
// directories (memtool.MkdirAll); a file in the way of those fails with
// ErrNotDir. A revert that fails (a policy over the wrapper refuses the
// write) removes the directories it created.
func Revert(ctx context.Context, store, inner memtool.Store, p string, n int) error {
	data, err := Read(ctx, inner, p, n)
	if err != nil {
		return err
	}
	name, _ := fileName(p)
	created, err := memtool.MkdirAll(ctx, store, path.Dir(name))
	if err != nil {
		return err
	}
	err = store.WriteFile(ctx, name, data, memtool.Replace)
	if err != nil {
		wctx := context.WithoutCancel(ctx)
		for i := len(created) - 1; i >= 0; i-- {
			store.Remove(wctx, created[i]) // one that holds an entry by now stays
		}
	}
	return err
}

func fileName(p string) (string, error) {
	name, dir, err := memtool.CleanPath(p)
	if err != nil {
		return "", err
	}
	if name == "" || dir {
		return "", fmt.Errorf("%s is not a file path", p)
	}
	return name, nil
}
