// This file holds the Store type, its Options, opening and closing, and
// the name and descriptor helpers the other files share.

package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/durable"
)

const (
	lockName    = ".memtool.lock"
	tempPrefix  = ".memtool-tmp-"
	trashPrefix = ".memtool-trash-"
	ownPrefix   = ".memtool"
)

// OwnName reports whether a name in a store's directory belongs to the
// file store's machinery (its lock, temp files and trash, the tenants'
// directory TenantsDir) rather than to a memory or a policy's data. Tools
// that read a store's directory directly (a migration carrying policy data
// along) leave these names to the store.
func OwnName(name string) bool {
	return name == lockName || name == TenantsDir ||
		strings.HasPrefix(name, tempPrefix) || strings.HasPrefix(name, trashPrefix)
}

// The lock file's mark, written in place over the same bytes so that
// marking needs no free space. Anything else than cleanMark at the start of
// a non-empty lock file (older versions wrote "pid N writing") is a writer
// at work, or one that died.
var (
	dirtyMark = []byte("dirty\n")
	cleanMark = []byte("clean\n")
)

// DefaultBusyTimeout is how long a write waits for the lock when
// Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// Options configure a Store. The zero value (or nil) means the defaults.
type Options struct {
	// BusyTimeout is how long a write waits for the store's lock while
	// another writer holds it, before it fails with memtool.ErrBusy. Zero
	// means DefaultBusyTimeout; a negative value means one try, no wait.
	BusyTimeout time.Duration
	// Logger receives what the store could not do and carried on without
	// (leftovers of a crashed writer it could not remove, a lock file it
	// could not use). Default slog.Default().
	Logger *slog.Logger
}

// Store is a memtool.Store in a local directory. It implements
// memtool.Renamer, memtool.RemoveAller, memtool.Tenanted and
// memtool.TenantLister.
type Store struct {
	dir  string
	root *os.Root
	self *os.File // the store's directory, read-only: its flock is the write lock
	turn chan struct{}
	busy time.Duration
	log  *slog.Logger
	opts Options // what the tenants' stores are opened with

	owner *Store      // the store this one is a tenant of; nil if none
	id    string      // the tenant's id, if owner is not nil
	uses  int         // a tenant's Tenant calls not yet ended by Close; guarded by owner.mu
	multi atomic.Bool // the directory has tenants (for good): the tenant-less view refuses
	// claimed: this process fsynced the directory holding .memtool-tenants
	// since it was made (see claim); guarded by mu.
	claimed bool

	syncs   dirSyncs    // this store's writers' directory fsyncs, shared
	noStage atomic.Bool // writes cannot stage (see stage): their temp files are made under the lock
	noPin   bool        // replaces do not pin what they replace (see pinAt); only tests set it
	pins    pinQueue    // this store's pins not yet closed, which Close waits for
	hooks   *testHooks  // nil but in tests
	debris  bool        // the lock's holder left debris: its mark stays (see leftDebris)

	mu      sync.Mutex
	tenants map[string]*Store // the tenants' stores opened so far, which Close closes
	closed  bool
}

// testHooks let tests stop a write at the points where other writers may
// come in.
type testHooks struct {
	staged  func() // a write has created its staged file
	relock  func() // an Update is about to take the lock again to rename
	dirSync func() // a directory fsync is about to run (see syncDir)
	// dirSyncErr, if it returns an error, is a directory fsync's failure
	// (EIO, say), returned instead of running the fsync.
	dirSyncErr func() error
	waiting    func() // a writer waits for a directory fsync (see dirSyncs.wait)
	tenantOpen func() // Tenant has checked a tenant's directory and opens it
}

var (
	_ memtool.Store        = (*Store)(nil)
	_ memtool.Renamer      = (*Store)(nil)
	_ memtool.RemoveAller  = (*Store)(nil)
	_ memtool.Tenanted     = (*Store)(nil)
	_ memtool.TenantLister = (*Store)(nil)
)

// Open opens the store in dir, creating the directory (0700) and its
// missing parents if it is missing, each fsynced into its parent; a
// directory no writer has used yet is fsynced into its parent, and its
// parents into theirs, all the same (see syncFresh). opts may be nil,
// which means the defaults. It fails only if the directory cannot be
// created, opened or so fsynced: on a read-only file system, or a
// directory this process may not write, it opens for reading (writes
// fail with memtool.ErrReadOnly).
//
// If a writer was interrupted (its mark is still in the lock file) and no
// writer holds the lock now, Open sweeps the temp files and trash it
// may have left, as far as it can, logs what it could not remove, and
// clears the mark. Otherwise it does not walk the tree, so opening costs
// the same whatever the store holds. It never waits for the lock.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	if err := syncFresh(dir, root); err != nil {
		root.Close()
		return nil, fmt.Errorf("filestore: %w", err)
	}
	return newStore(dir, root, o)
}

// syncFresh fsyncs the parent of dir, and each directory above it on the
// same file system, if no writer has used the store yet (it has no lock
// file). Such a directory may be another process's, made a moment ago
// with its missing parents, whose fsyncs into their parents are still
// under way or failed (the process was killed): durable.MkdirAll, finding
// it there, fsyncs nothing, and this process's writes must not count
// before the directory and those parents are durable. Every writer makes
// the lock file after its Open, so a store that has one costs no fsync.
// A directory this process may not open, or whose file system takes no
// fsync, is left as MkdirAll leaves it.
func syncFresh(dir string, root *os.Root) error {
	if _, err := root.Lstat(lockName); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	d, err := filepath.Abs(dir)
	if err == nil {
		d, err = filepath.EvalSymlinks(d) // the parents of the directory itself
	}
	if err != nil {
		d = filepath.Clean(dir)
	}
	for {
		parent := filepath.Dir(d)
		if parent == d || !sameDevice(d, parent) {
			return nil // the root of its file system: in no parent of it
		}
		err := syncParent(parent)
		if err != nil && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.EINVAL) {
			return err
		}
		d = parent
	}
}

// sameDevice reports whether a and b are on one file system, or either
// cannot be looked at.
func sameDevice(a, b string) bool {
	var sa, sb syscall.Stat_t
	if syscall.Stat(a, &sa) != nil || syscall.Stat(b, &sb) != nil {
		return true
	}
	return sa.Dev == sb.Dev
}

// syncParent fsyncs the directory parent; a test counts its calls.
var syncParent = func(parent string) error {
	d, err := os.Open(parent)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// newStore opens the store whose directory root is open on, taking root
// over, and recovers it.
func newStore(dir string, root *os.Root, o Options) (*Store, error) {
	self, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("filestore: %w", err)
	}
	s := &Store{dir: dir, root: root, self: self, turn: make(chan struct{}, 1), busy: o.BusyTimeout, log: o.Logger, opts: o}
	s.recover()
	return s, nil
}

// Close releases the directory and the stores of the tenants that Tenant
// opened. A tenant's store's Close ends instead the use that one Tenant
// call began: the last one closes it (its descriptors), and the next
// Tenant call for its id opens it again.
func (s *Store) Close() error {
	if s.owner != nil {
		return s.owner.endUse(s)
	}
	s.mu.Lock()
	tenants := s.tenants
	s.tenants, s.closed = nil, true
	s.mu.Unlock()
	var errs []error
	for _, t := range tenants {
		errs = append(errs, t.release())
	}
	return errors.Join(append(errs, s.release())...)
}

func (s *Store) release() error {
	s.pins.wait()
	return errors.Join(s.self.Close(), s.root.Close())
}

// Dir returns the directory the store was opened on.
func (s *Store) Dir() string { return s.dir }

func rootName(name string) string {
	if name == "" {
		return "."
	}
	return name
}

func split(name string) (dir, base string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// withFd runs fn with the descriptor of d, keeping d alive meanwhile.
func withFd(d *os.File, fn func(fd int) error) error {
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
