package keys

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
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

func (f *fileKeys) load() ([]record, error) {
	data, err := os.ReadFile(f.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var frs []fileRecord
	if err := json.Unmarshal(data, &frs); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(f.path), err)
	}
	out := make([]record, 0, len(frs))
	for _, fr := range frs {
		r, err := scanRecord(fileRow(fr))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b record) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// fileRow lets scanRecord read a fileRecord as it reads a row.
type fileRow fileRecord

func (fr fileRow) Scan(dest ...any) error {
	*dest[0].(*string), *dest[1].(*string), *dest[2].(*string) = fr.ID, fr.Name, fr.Tenant
	*dest[3].(*string), *dest[4].(*string) = fr.Scope, fr.Hash
	*dest[5].(*int64), *dest[6].(*int64), *dest[7].(*int64) = fr.Created, fr.Expires, fr.Revoked
	return nil
}

func (f *fileKeys) save(recs []record) error {
	frs := make([]fileRecord, len(recs))
	for i, r := range recs {
		frs[i] = fileRecord{ID: r.ID, Name: r.Name, Tenant: r.Tenant, Scope: r.Scope.String(), Hash: hex.EncodeToString(r.hash),
			Created: millis(r.Created), Expires: millis(r.Expires), Revoked: millis(r.Revoked)}
	}
	data, err := json.MarshalIndent(frs, "", "\t")
	if err != nil {
		return err
	}
	return durable.Replace(f.path, append(data, '\n'))
}

func (f *fileKeys) insert(ctx context.Context, r record) error {
	return f.withLock(ctx, func() error {
		recs, err := f.load()
		if err != nil {
			return err
		}
		if slices.ContainsFunc(recs, func(x record) bool { return x.ID == r.ID }) {
			return errIDTaken
		}
		return f.save(append(recs, r))
	})
}

func (f *fileKeys) get(ctx context.Context, id string) (record, error) {
	recs, err := f.list(ctx)
	if err != nil {
		return record{}, err
	}
	for _, r := range recs {
		if r.ID == id {
			return r, nil
		}
	}
	return record{}, ErrNotFound
}

// list reads the file without the lock: a rename replaces it whole.
func (f *fileKeys) list(ctx context.Context) ([]record, error) { return f.load() }

func (f *fileKeys) revoke(ctx context.Context, id string, at time.Time) error {
	if missing(f.path) {
		// No key file, no key to revoke: no lock file is made beside a
		// store that has no keys.
		return ErrNotFound
	}
	return f.withLock(ctx, func() error {
		recs, err := f.load()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(recs, func(x record) bool { return x.ID == id })
		if i < 0 {
			return ErrNotFound
		}
		if recs[i].Revoked.IsZero() {
			recs[i].Revoked = at
			return f.save(recs)
		}
		return nil
	})
}

func (f *fileKeys) close() error { return nil }
