package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/memtool/memtool"
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

	// S3Bucket is the bucket's name when the bucket is an S3 bucket (one
	// opened by gocloud.dev/blob/s3blob). Edits then read the object's ETag
	// and write with If-Match through the bucket's S3 client, and renames
	// delete their sources with If-Match, so that processes sharing the
	// bucket never lose an update (see the package documentation, "Rename
	// on S3"). Open sets it for s3:// URLs.
	S3Bucket string
}

// bucket is one opened bucket, shared by the stores of all its tenants.
type bucket struct {
	b      *blob.Bucket
	prefix string // "" or ending in "/"
	s3     *s3.Client
	s3name string

	// mu serialises this process's changes, so that within one process
	// every change sees the one before it, on every driver.
	mu sync.Mutex

	// What checkDeleteConditions found, once it has.
	probeMu  sync.Mutex
	probed   bool
	probeErr error
}

// Store is a memtool.Store in a gocloud.dev/blob bucket. It implements
// memtool.Renamer, memtool.RemoveAller and memtool.Tenanted, and Tenants.
type Store struct {
	bk     *bucket
	tenant string
	root   string // the key prefix of this memory's entries, ending in "/"
	owner  bool   // Close closes the bucket

	claimMu sync.Mutex
	claimed bool
}

var (
	_ memtool.Store       = (*Store)(nil)
	_ memtool.Renamer     = (*Store)(nil)
	_ memtool.RemoveAller = (*Store)(nil)
	_ memtool.Tenanted    = (*Store)(nil)
)

// New returns the tenant-less store in b. Closing the store closes b.
func New(b *blob.Bucket, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	prefix, err := cleanPrefix(opts.Prefix)
	if err != nil {
		return nil, err
	}
	bk := &bucket{b: b, prefix: prefix, s3name: opts.S3Bucket}
	if opts.S3Bucket != "" {
		if !b.As(&bk.s3) {
			return nil, fmt.Errorf("objectstore: Options.S3Bucket is set but the bucket is not an S3 bucket")
		}
	}
	return &Store{bk: bk, root: prefix + filesDir, owner: true}, nil
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
	return s.bk.b.Close()
}

// Tenant returns the store of tenant id, which must pass
// memtool.ValidateTenant. The first call marks the bucket (under the
// prefix) multi-tenant for good; on one already used without a tenant it
// fails with memtool.ErrTenancy.
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("objectstore: tenant %q: a tenant's store has no tenants", id)
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, err
	}
	if err := s.bk.claim(ctx, "multi"); err != nil {
		return nil, err
	}
	t := &Store{bk: s.bk, tenant: id, root: s.bk.prefix + tenantsDir + id + "/" + filesDir}
	t.claimed = true
	return t, nil
}

// Tenants lists the tenants that hold at least one entry, in key order.
// A store that has never had a tenant has none; a single-tenant one fails
// with memtool.ErrTenancy.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("objectstore: a tenant's store has no tenants")
	}
	mode, err := s.bk.tenancy(ctx)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "":
		return nil, nil
	case "single":
		return nil, fmt.Errorf("objectstore: %w", memtool.TenancyError(false))
	}
	var ids []string
	it := s.bk.b.List(&blob.ListOptions{Prefix: s.bk.prefix + tenantsDir, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		id := strings.TrimSuffix(strings.TrimPrefix(obj.Key, s.bk.prefix+tenantsDir), "/")
		if obj.IsDir && memtool.ValidateTenant(id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// tenancy returns the recorded mode: "", "single" or "multi".
func (bk *bucket) tenancy(ctx context.Context) (string, error) {
	data, err := bk.b.ReadAll(ctx, bk.prefix+tenancyKey)
	if notFound(err) {
		return "", nil
	}
	return string(data), err
}

// claim records the tenancy mode on first use (a create-only write, so
// that of two processes claiming at once one wins) and checks it after.
func (bk *bucket) claim(ctx context.Context, mode string) error {
	got, err := bk.tenancy(ctx)
	if err != nil {
		return err
	}
	if got == "" {
		err := bk.b.WriteAll(ctx, bk.prefix+tenancyKey, []byte(mode), &blob.WriterOptions{IfNotExist: true, ContentType: "text/plain"})
		if err != nil && gcerrors.Code(err) != gcerrors.FailedPrecondition {
			return err
		}
		if got, err = bk.tenancy(ctx); err != nil {
			return err
		}
	}
	if got != mode {
		return fmt.Errorf("objectstore: %w", memtool.TenancyError(got == "multi"))
	}
	return nil
}

// ready checks ctx and makes sure the tenant-less store claims the bucket
// as single-tenant before its first use.
func (s *Store) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.claimed {
		return nil
	}
	if err := s.bk.claim(ctx, "single"); err != nil {
		return err
	}
	s.claimed = true
	return nil
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

// notFound reports whether err says there is no object at the key. On
// fileblob a key under a file's key is not found either (ENOTDIR).
func notFound(err error) bool {
	return err != nil && (gcerrors.Code(err) == gcerrors.NotFound || errors.Is(err, syscall.ENOTDIR))
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// blobErr wraps a service failure; cancellation stays recognisable.
func blobErr(ctx context.Context, op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return pathErr(op, name, err)
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
	attrs, err := s.bk.b.Attributes(ctx, s.fileKey(name))
	if err == nil {
		return regular, attrs.Size, nil
	}
	if !notFound(err) {
		return missing, 0, err
	}
	ok, err := s.bk.b.Exists(ctx, s.markerKey(name))
	if notFound(err) {
		return missing, 0, nil
	}
	if err != nil || !ok {
		return missing, 0, err
	}
	return directory, 0, nil
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

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := s.ready(ctx); err != nil {
		return memtool.FileInfo{}, err
	}
	k, size, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return memtool.FileInfo{}, blobErr(ctx, "stat", name, err)
	case k == missing:
		return memtool.FileInfo{}, pathErr("stat", name, memtool.ErrNotExist)
	case k == directory:
		return memtool.FileInfo{Name: baseOf(name), Type: fs.ModeDir}, nil
	}
	return memtool.FileInfo{Name: baseOf(name), Size: size}, nil
}

// missingFile returns the error for reading a file object that is not
// there: the name is a directory, or nothing.
func (s *Store) missingFile(ctx context.Context, op, name string) error {
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return blobErr(ctx, op, name, err)
	case k == directory:
		return pathErr(op, name, memtool.ErrIsDir)
	}
	return pathErr(op, name, memtool.ErrNotExist)
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.readFile(ctx, "read", name, limit)
}

func (s *Store) readFile(ctx context.Context, op, name string, limit int64) ([]byte, error) {
	if name == "" {
		return nil, pathErr(op, name, memtool.ErrIsDir)
	}
	r, err := s.bk.b.NewReader(ctx, s.fileKey(name), nil)
	if notFound(err) {
		return nil, s.missingFile(ctx, op, name)
	}
	if err != nil {
		return nil, blobErr(ctx, op, name, err)
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, pathErr(op, name, memtool.ErrTooLarge)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, blobErr(ctx, op, name, err)
	}
	return data, nil
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return nil, blobErr(ctx, "readdir", name, err)
	case k == missing:
		return nil, pathErr("readdir", name, memtool.ErrNotExist)
	case k == regular:
		return nil, pathErr("readdir", name, memtool.ErrNotDir)
	}
	prefix := s.dirPrefix(name)
	out := []memtool.FileInfo{}
	it := s.bk.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, blobErr(ctx, "readdir", name, err)
		}
		base := strings.TrimSuffix(strings.TrimPrefix(obj.Key, prefix), "/")
		switch {
		case base == "" || strings.HasPrefix(base, ".memtool"):
			// The directory's own marker, or the store's own objects.
		case obj.IsDir:
			out = append(out, memtool.FileInfo{Name: base, Type: fs.ModeDir})
		default:
			out = append(out, memtool.FileInfo{Name: base, Size: obj.Size})
		}
	}
	return out, nil
}

// writeOptions are those of every object the store writes.
func writeOptions(createOnly bool) *blob.WriterOptions {
	return &blob.WriterOptions{ContentType: "application/octet-stream", IfNotExist: createOnly}
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("write", name, memtool.ErrIsDir)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return blobErr(ctx, "write", name, s.writeFile(ctx, name, data, mode))
}

func (s *Store) writeFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.checkParent(ctx, "write", name); err != nil {
		return err
	}
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return err
	case k != missing && mode == memtool.CreateOnly:
		return pathErr("write", name, memtool.ErrExist)
	case k == directory:
		return pathErr("write", name, memtool.ErrIsDir)
	}
	if s.bk.s3 != nil && mode == memtool.CreateOnly {
		return s.createS3(ctx, "write", name, s.fileKey(name), data)
	}
	err = s.bk.b.WriteAll(ctx, s.fileKey(name), data, writeOptions(mode == memtool.CreateOnly))
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		// Another process created it since we looked.
		return pathErr("write", name, memtool.ErrExist)
	}
	return err
}

// createS3 writes a new object at key for the entry name (a file, or a
// directory's marker) with If-None-Match, then settles it against a
// rename or removal of its directory by another process: if that took the
// directory away, the create is undone and fails with ErrNotExist.
func (s *Store) createS3(ctx context.Context, op, name, key string, data []byte) error {
	etag, err := s.bk.s3put(ctx, key, data, ifAbsent, nil)
	if isPrecondition(err) {
		// Another process created it since we looked.
		return pathErr(op, name, memtool.ErrExist)
	}
	if err != nil {
		return err
	}
	parent := parentOf(name)
	if parent == "" {
		return nil
	}
	where, err := s.settle(ctx, key, etag, s.markerKey(parent))
	if err == nil && where == undone {
		err = pathErr(op, name, memtool.ErrNotExist)
	}
	return err
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.bk.s3 != nil {
		return s.updateS3(ctx, name, limit, fn)
	}
	old, err := s.readFile(ctx, "update", name, limit)
	if err != nil {
		return err
	}
	updated, err := fn(old)
	if err != nil {
		return err
	}
	return blobErr(ctx, "update", name, s.bk.b.WriteAll(ctx, s.fileKey(name), updated, writeOptions(false)))
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("mkdir", name, memtool.ErrExist)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return blobErr(ctx, "mkdir", name, s.mkdir(ctx, name))
}

func (s *Store) mkdir(ctx context.Context, name string) error {
	if err := s.checkParent(ctx, "mkdir", name); err != nil {
		return err
	}
	if k, _, err := s.kindOf(ctx, name); err != nil {
		return err
	} else if k != missing {
		return pathErr("mkdir", name, memtool.ErrExist)
	}
	if s.bk.s3 != nil {
		return s.createS3(ctx, "mkdir", name, s.markerKey(name), markerBody())
	}
	err := s.bk.b.WriteAll(ctx, s.markerKey(name), nil, writeOptions(true))
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return pathErr("mkdir", name, memtool.ErrExist)
	}
	return err
}

func (s *Store) Remove(ctx context.Context, name string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("remove", name, fs.ErrInvalid)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return blobErr(ctx, "remove", name, s.remove(ctx, name))
}

func (s *Store) remove(ctx context.Context, name string) error {
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return err
	case k == missing:
		return pathErr("remove", name, memtool.ErrNotExist)
	case k == regular:
		return s.bk.b.Delete(ctx, s.fileKey(name))
	}
	keys, err := s.keysBelow(ctx, name, 2)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if key != s.markerKey(name) {
			return pathErr("remove", name, memtool.ErrNotEmpty)
		}
	}
	return s.bk.b.Delete(ctx, s.markerKey(name))
}

// keysBelow returns the keys of every object under the directory name,
// its own marker included, up to max of them (0: all).
func (s *Store) keysBelow(ctx context.Context, name string, max int) ([]string, error) {
	return s.keysUnder(ctx, s.dirPrefix(name), max)
}

// keysUnder returns the keys that start with prefix, up to max of them
// (0: all).
func (s *Store) keysUnder(ctx context.Context, prefix string, max int) ([]string, error) {
	var keys []string
	it := s.bk.b.List(&blob.ListOptions{Prefix: prefix})
	for max == 0 || len(keys) < max {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, obj.Key)
	}
	return keys, nil
}

// RemoveAll removes the file or directory at name and everything in it:
// the files first, then the directory markers, deepest first, so that
// until the last step the directory still exists, and a crash leaves a
// smaller tree, never an entry without its directory.
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("removeall", name, fs.ErrInvalid)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return blobErr(ctx, "removeall", name, s.removeAll(ctx, name))
}

func (s *Store) removeAll(ctx context.Context, name string) error {
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return err
	case k == missing:
		return pathErr("removeall", name, memtool.ErrNotExist)
	case k == regular:
		return s.bk.b.Delete(ctx, s.fileKey(name))
	}
	keys, err := s.keysBelow(ctx, name, 0)
	if err != nil {
		return err
	}
	return s.deleteTree(ctx, keys)
}

// deleteTree deletes keys: files first, then markers, deepest first.
func (s *Store) deleteTree(ctx context.Context, keys []string) error {
	keys = slices.Clone(keys)
	sortForDelete(keys)
	for _, key := range keys {
		if err := s.bk.b.Delete(ctx, key); err != nil && !notFound(err) {
			return err
		}
	}
	return nil
}

// sortForDelete orders keys for deleting a tree: files first, then
// markers, deepest first, so that every step leaves each remaining entry
// in its directory.
func sortForDelete(keys []string) {
	isMarker := func(k string) bool { return strings.HasSuffix(k, "/"+dirMarker) }
	slices.SortStableFunc(keys, func(a, b string) int {
		ma, mb := isMarker(a), isMarker(b)
		switch {
		case ma != mb && ma:
			return 1
		case ma != mb:
			return -1
		case ma:
			return strings.Count(b, "/") - strings.Count(a, "/")
		}
		return 0
	})
}

// Rename moves the file or directory at oldname to newname. Object
// storage has no rename: the destination is written first (its file, or
// its directory marker, with a create-only write, so that of racing
// renames onto one name exactly one wins), then everything inside a
// directory is copied, and only then is the source deleted. It is not one
// atomic step: see the package documentation for what a reader, a crash
// or another process may see. On S3 the sources are deleted only on the
// ETags that were copied (renameFileS3, renameDirS3); on a service that
// ignores that condition Rename is refused with a memtool.Refusal.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if oldname == "" || newname == "" || strings.HasPrefix(newname+"/", oldname+"/") {
		return pathErr("rename", oldname, fmt.Errorf("cannot move %q to %q: %w", oldname, newname, fs.ErrInvalid))
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return blobErr(ctx, "rename", oldname, s.rename(ctx, oldname, newname))
}

func (s *Store) rename(ctx context.Context, oldname, newname string) error {
	k, _, err := s.kindOf(ctx, oldname)
	switch {
	case err != nil:
		return err
	case k == missing:
		return pathErr("rename", oldname, memtool.ErrNotExist)
	}
	if err := s.checkParent(ctx, "rename", newname); err != nil {
		return err
	}
	if nk, _, err := s.kindOf(ctx, newname); err != nil {
		return err
	} else if nk != missing {
		return pathErr("rename", newname, memtool.ErrExist)
	}
	if s.bk.s3 != nil {
		if err := s.bk.checkDeleteConditions(ctx); err != nil {
			return err
		}
		if k == regular {
			return s.renameFileS3(ctx, oldname, newname)
		}
		return s.renameDirS3(ctx, oldname, newname)
	}
	// Other services: correct within this process, which holds s.bk.mu.
	if k == regular {
		data, err := s.bk.b.ReadAll(ctx, s.fileKey(oldname))
		if err != nil {
			return err
		}
		err = s.bk.b.WriteAll(ctx, s.fileKey(newname), data, writeOptions(true))
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return pathErr("rename", newname, memtool.ErrExist)
		}
		if err != nil {
			return err
		}
		return s.bk.b.Delete(ctx, s.fileKey(oldname))
	}
	keys, err := s.keysBelow(ctx, oldname, 0)
	if err != nil {
		return err
	}
	err = s.bk.b.WriteAll(ctx, s.markerKey(newname), nil, writeOptions(true))
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return pathErr("rename", newname, memtool.ErrExist)
	}
	if err != nil {
		return err
	}
	from, to := s.dirPrefix(oldname), s.dirPrefix(newname)
	copied := []string{s.markerKey(newname)}
	for _, key := range keys {
		if key == s.markerKey(oldname) {
			continue
		}
		dst := to + strings.TrimPrefix(key, from)
		if err := s.bk.b.Copy(ctx, dst, key, nil); err != nil {
			// Undo the copy (only what it wrote): the source is still whole.
			return errors.Join(err, s.deleteTree(context.WithoutCancel(ctx), copied))
		}
		copied = append(copied, dst)
	}
	return s.deleteTree(ctx, keys)
}
