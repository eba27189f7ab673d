package keys

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool/internal/durable"
	"github.com/memtool/memtool/internal/wait"
)

// fileKeys keeps the keys of a directory store in a JSON file beside the
// directory (DIR.keys), which every process on the machine sees. Each
// change rewrites the file under an flock of DIR.keys.lock: a new file
// is written, fsynced and renamed over the old one, and the folder is
// fsynced, so a crash leaves the old keys or the new ones, never a torn
// file.
type fileKeys struct {
	path string // DIR.keys
	lock string // DIR.keys.lock
}

// fileRecord is a record as the file spells it.
type fileRecord struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Tenant  string `json:"tenant"`
	Scope   string `json:"scope"`
	Hash    string `json:"sha256"`
	Created int64  `json:"created_ms"`
	Expires int64  `json:"expires_ms"`
	Revoked int64  `json:"revoked_ms"`
}

func newFileKeys(dir string) *fileKeys {
	base := filepath.Clean(dir) + ".keys"
	return &fileKeys{path: base, lock: base + ".lock"}
}

// withLock runs fn holding the lock file's flock: the changes of all
// processes take turns.
func (f *fileKeys) withLock(ctx context.Context, fn func() error) error {
	lf, err := os.OpenFile(f.lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	for {
		err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			return fmt.Errorf("locking %s: %w", filepath.Base(f.lock), err)
		}
		if err := wait.Sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	return fn()
}

// A badRecord is an entry of the key file that is no valid key (a hand
// edit): never used, and kept as written by the keyring's changes, for
// its owner to mend.
type badRecord struct {
	raw json.RawMessage
	id  string // as written, if it could be read
	err error  // wraps ErrMalformed
}

// keyFile is what the key file holds.
type keyFile struct {
	recs []record
	raws []json.RawMessage // of recs, as written
	bad  []badRecord
}

// load reads the key file. A file that is not a JSON array is an error:
// nothing of it can be trusted. An entry that is no valid key, or one of
// two entries of one id, is a bad record, and the others are read.
func (f *fileKeys) load() (keyFile, error) {
	var kf keyFile
	data, err := os.ReadFile(f.path)
	if os.IsNotExist(err) {
		return kf, nil
	}
	if err != nil {
		return kf, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return kf, fmt.Errorf("%s: %w", filepath.Base(f.path), err)
	}
	count := map[string]int{}
	for i, raw := range raws {
		var id struct {
			ID string `json:"id"`
		}
		json.Unmarshal(raw, &id) // a record that has none is bad below
		count[id.ID]++
		var fr fileRecord
		r, err := record{}, json.Unmarshal(raw, &fr)
		if err == nil {
			r, err = scanRecord(fileRow(fr))
		} else {
			err = fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if err != nil {
			kf.bad = append(kf.bad, badRecord{raw, id.ID, fmt.Errorf("%s: record %d (key %q): %w", filepath.Base(f.path), i+1, id.ID, err)})
			continue
		}
		kf.recs, kf.raws = append(kf.recs, r), append(kf.raws, raw)
	}
	// Which of two records of one id holds? Neither is used.
	var order []int
	for i, r := range kf.recs {
		if count[r.ID] > 1 {
			err := fmt.Errorf("%s: key %q: %w: more than one record", filepath.Base(f.path), r.ID, ErrMalformed)
			kf.bad = append(kf.bad, badRecord{kf.raws[i], r.ID, err})
			continue
		}
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := kf.recs[i], kf.recs[j]
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	recs, raws := make([]record, len(order)), make([]json.RawMessage, len(order))
	for i, j := range order {
		recs[i], raws[i] = kf.recs[j], kf.raws[j]
	}
	kf.recs, kf.raws = recs, raws
	return kf, nil
}

// badErr returns the error of the bad records of id, or nil.
func (kf keyFile) badErr(id string) error {
	var errs []error
	for _, b := range kf.bad {
		if b.id == id {
			errs = append(errs, b.err)
		}
	}
	return errors.Join(errs...)
}

// listErr returns the error of every bad record, or nil.
func (kf keyFile) listErr() error {
	errs := make([]error, len(kf.bad))
	for i, b := range kf.bad {
		errs[i] = b.err
	}
	return errors.Join(errs...)
}

// fileRow lets scanRecord read a fileRecord as it reads a row.
type fileRow fileRecord

func (fr fileRow) Scan(dest ...any) error {
	*dest[0].(*string), *dest[1].(*string), *dest[2].(*string) = fr.ID, fr.Name, fr.Tenant
	*dest[3].(*string), *dest[4].(*string) = fr.Scope, fr.Hash
	*dest[5].(*int64), *dest[6].(*int64), *dest[7].(*int64) = fr.Created, fr.Expires, fr.Revoked
	return nil
}

// save writes recs, and after them the bad records as they were written.
func (f *fileKeys) save(recs []record, bad []badRecord) error {
	entries := make([]any, 0, len(recs)+len(bad))
	for _, r := range recs {
		entries = append(entries, fileRecord{ID: r.ID, Name: r.Name, Tenant: r.Tenant, Scope: r.Scope.String(), Hash: hex.EncodeToString(r.hash),
			Created: millis(r.Created), Expires: millis(r.Expires), Revoked: millis(r.Revoked)})
	}
	for _, b := range bad {
		entries = append(entries, b.raw)
	}
	data, err := json.MarshalIndent(entries, "", "\t")
	if err != nil {
		return err
	}
	return durable.Replace(f.path, append(data, '\n'))
}

func (f *fileKeys) insert(ctx context.Context, r record) error {
	return f.withLock(ctx, func() error {
		kf, err := f.load()
		if err != nil {
			return err
		}
		if slices.ContainsFunc(kf.recs, func(x record) bool { return x.ID == r.ID }) || kf.badErr(r.ID) != nil {
			return errIDTaken
		}
		return f.save(append(kf.recs, r), kf.bad)
	})
}

// get returns the record of id; a bad record of id is an error, neither
// a key nor ErrNotFound.
func (f *fileKeys) get(ctx context.Context, id string) (record, error) {
	kf, err := f.load()
	if err != nil {
		return record{}, err
	}
	if err := kf.badErr(id); err != nil {
		return record{}, err
	}
	for _, r := range kf.recs {
		if r.ID == id {
			return r, nil
		}
	}
	return record{}, ErrNotFound
}

// list reads the file without the lock: a rename replaces it whole. Bad
// records are an error wrapping ErrMalformed, beside the good ones.
func (f *fileKeys) list(ctx context.Context) ([]record, error) {
	kf, err := f.load()
	if err != nil {
		return nil, err
	}
	return kf.recs, kf.listErr()
}

func (f *fileKeys) revoke(ctx context.Context, id string, at time.Time) error {
	if missing(f.path) {
		// No key file, no key to revoke: no lock file is made beside a
		// store that has no keys.
		return ErrNotFound
	}
	return f.withLock(ctx, func() error {
		kf, err := f.load()
		if err != nil {
			return err
		}
		if err := kf.badErr(id); err != nil {
			// Not used as a key anyway; its owner mends or removes it.
			return err
		}
		i := slices.IndexFunc(kf.recs, func(x record) bool { return x.ID == id })
		if i < 0 {
			return ErrNotFound
		}
		if kf.recs[i].Revoked.IsZero() {
			kf.recs[i].Revoked = at
			return f.save(kf.recs, kf.bad)
		}
		return nil
	})
}

func (f *fileKeys) close() error { return nil }
