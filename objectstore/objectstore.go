package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy"
)

// Names the store keeps for itself. The path gate refuses every name that
// starts with ".memtool", so no memory can hold an entry of these names.
const (
	dirMarker  = ".memtool-dir"     // the object that makes a directory exist
	tenancyKey = ".memtool-tenancy" // "single" or "multi", written once
	tenantsDir = "tenants/"         // tenant ID's memory is under tenants/ID/f/
	filesDir   = "f/"               // the tenant-less memory is under f/
)

// Options configure a store. The zero value (or nil) is a store at the
// top of the bucket on a service without conditional edits.
type Options struct {
	// Prefix is prepended to every key, so that one bucket can hold other
	// data, or several stores. Leading and trailing slashes are ignored.
	Prefix string

	// S3Bucket is the name of the bucket on S3: NewS3 needs it. Edits
	// read the object's ETag and write with If-Match, and renames delete
	// their sources with If-Match, so that processes sharing the bucket
	// never lose an update (see the package documentation, "Rename on
	// S3"). Open sets it for s3:// URLs. (In a build with gocloud.dev/blob,
	// it says that the *blob.Bucket given to New is an S3 bucket, which
	// the store then speaks to through its S3 client.)
	S3Bucket string
}

// bucket is one opened bucket, shared by the stores of all its tenants.
type bucket struct {
	b      objects
	prefix string     // "" or ending in "/"
	s3     *s3.Client // the S3 client, if the bucket is on S3 (b is an *s3objects)
	s3name string
	s3o    *s3objects

	// mu serialises this process's changes, so that within one process
	// every change sees the one before it, on every driver.
	mu sync.Mutex

	// Whether checkOutside found the prefix outside every other store.
	outsideMu sync.Mutex
	outside   bool

	// What checkDeleteConditions found, once it has.
	probeMu  sync.Mutex
	probed   bool
	probeErr error
}

// Store is a memtool.Store in a bucket of object storage. It implements
// memtool.Renamer, memtool.RemoveAller and memtool.Tenanted, and Tenants.
type Store struct {
	bk     *bucket
	tenant string
	root   string        // the key prefix of this memory's entries, ending in "/"
	owner  bool          // Close closes the bucket
	gate   *tenancy.Gate // the claim of the mode before the first use
}

var (
	_ memtool.Store       = (*Store)(nil)
	_ memtool.Renamer     = (*Store)(nil)
	_ memtool.RemoveAller = (*Store)(nil)
	_ memtool.Tenanted    = (*Store)(nil)
)

// NewS3 returns the tenant-less store in the S3 bucket opts.S3Bucket,
// spoken to through client. Closing the store does not close the client
// (an *s3.Client needs no closing).
func NewS3(client *s3.Client, opts *Options) (*Store, error) {
	if opts == nil || opts.S3Bucket == "" {
		return nil, fmt.Errorf("objectstore: NewS3 needs the bucket's name in Options.S3Bucket")
	}
	return newStore(&s3objects{client: client, name: opts.S3Bucket}, opts)
}

// newStore returns the tenant-less store in objs. Closing the store
// closes objs.
func newStore(objs objects, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	prefix, err := cleanPrefix(opts.Prefix)
	if err != nil {
		return nil, err
	}
	bk := &bucket{b: objs, prefix: prefix}
	if o, ok := objs.(*s3objects); ok {
		bk.s3, bk.s3name, bk.s3o = o.client, o.name, o
	}
	return &Store{bk: bk, root: prefix + filesDir, owner: true, gate: new(tenancy.Gate)}, nil
}

// cleanPrefix turns a prefix into "" or a clean one ending in "/".
func cleanPrefix(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsFunc(seg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", fmt.Errorf("objectstore: invalid prefix %q", p)
		}
	}
	return p + "/", nil
}

// Close closes the bucket. Closing a tenant's store does nothing; close
// the store New or Open returned.
func (s *Store) Close() error {
	if !s.owner {
		return nil
	}
	return s.bk.b.close()
}

// lock takes the process's write lock, unless ctx ends first.
func (s *Store) lock(ctx context.Context) error {
	s.bk.mu.Lock()
	if err := ctx.Err(); err != nil {
		s.bk.mu.Unlock()
		return err
	}
	return nil
}

func (s *Store) unlock() { s.bk.mu.Unlock() }

// change runs fn, op's change of name, under the process's write lock once
// the store has claimed its mode, unless refused says that name cannot
// take it: then it fails with refusal.
func (s *Store) change(ctx context.Context, op, name string, refused bool, refusal error, fn func() error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if refused {
		return pathErr(op, name, refusal)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return blobErr(ctx, op, name, fn())
}

// Keys. A file is the object root+name; a directory is the marker object
// root+name+"/.memtool-dir"; the entries of a directory are the keys under
// dirPrefix(name).
func (s *Store) fileKey(name string) string   { return s.root + name }
func (s *Store) markerKey(name string) string { return s.dirPrefix(name) + dirMarker }
func (s *Store) dirPrefix(name string) string {
	if name == "" {
		return s.root
	}
	return s.root + name + "/"
}

// notFound reports whether err says there is no object at the key.
func notFound(err error) bool { return errors.Is(err, errNotFound) }

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// blobErr wraps a service failure; cancellation stays recognisable. An
// error that says what the change did (a memtool.Refusal, ErrBusy or
// ErrOutcomeUnknown) is never made a cancellation, which Memory reads as
// "nothing was changed": a rename goes on after ctx ends, and may end in a
// refusal that says what it left where.
func blobErr(ctx context.Context, op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) && !tellsOutcome(err) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return pathErr(op, name, err)
}

// tellsOutcome reports whether err says what became of the change it
// failed: a refusal whose text says it, ErrBusy (nothing changed), or
// ErrOutcomeUnknown (something may have).
func tellsOutcome(err error) bool {
	var ref memtool.Refusal
	return errors.As(err, &ref) || errors.Is(err, memtool.ErrBusy) || errors.Is(err, memtool.ErrOutcomeUnknown)
}

func parentOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

func baseOf(name string) string {
	return name[strings.LastIndexByte(name, '/')+1:]
}

type kind int

const (
	missing kind = iota
	regular
	directory
)

// kindOf says what is at name: its file object, else its marker.
func (s *Store) kindOf(ctx context.Context, name string) (kind, int64, error) {
	if name == "" {
		return directory, 0, nil
	}
	size, err := s.bk.b.size(ctx, s.fileKey(name))
	if err == nil {
		return regular, size, nil
	}
	if !notFound(err) {
		return missing, 0, err
	}
	ok, err := exists(ctx, s.bk.b, s.markerKey(name))
	if err != nil || !ok {
		return missing, 0, err
	}
	return directory, 0, nil
}

// existing is kindOf for op on an entry that must be there: ErrNotExist if
// nothing is at name.
func (s *Store) existing(ctx context.Context, op, name string) (kind, int64, error) {
	k, size, err := s.kindOf(ctx, name)
	if err == nil && k == missing {
		err = pathErr(op, name, memtool.ErrNotExist)
	}
	return k, size, err
}

// checkParent returns the error for op on name unless name's parent is a
// directory.
func (s *Store) checkParent(ctx context.Context, op, name string) error {
	k, _, err := s.kindOf(ctx, parentOf(name))
	switch {
	case err != nil:
		return err
	case k == missing:
		return pathErr(op, name, memtool.ErrNotExist)
	case k == regular:
		return pathErr(op, name, memtool.ErrNotDir)
	}
	return nil
}

// checkFree returns the error for op on name unless an entry can be made
// at name: its parent is a directory and nothing is at name.
func (s *Store) checkFree(ctx context.Context, op, name string) error {
	if err := s.checkParent(ctx, op, name); err != nil {
		return err
	}
	if k, _, err := s.kindOf(ctx, name); err != nil {
		return err
	} else if k != missing {
		return pathErr(op, name, memtool.ErrExist)
	}
	return nil
}

// put writes data to the object key of the entry name, for op. With
// createOnly it writes only if no object is at key, and ErrExist says that
// another process made one since we looked.
func (s *Store) put(ctx context.Context, op, name, key string, data []byte, createOnly bool) error {
	err := s.bk.b.write(ctx, key, data, createOnly)
	if errors.Is(err, errExists) {
		return pathErr(op, name, memtool.ErrExist)
	}
	return err
}
