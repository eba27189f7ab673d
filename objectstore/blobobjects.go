//go:build gcs || azure

package objectstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/memtool/memtool"
)

// This file is in a build with Google Cloud Storage or Azure Blob Storage
// (-tags gcs, -tags azure), whose drivers are gocloud.dev/blob's: the
// default build leaves gocloud.dev (and the gRPC it brings) out.

// New returns the tenant-less store in b, a bucket you opened yourself
// through gocloud.dev/blob. Closing the store closes b. If opts.S3Bucket
// is set, b must be an S3 bucket (gocloud.dev/blob/s3blob) of that name,
// and the store speaks to it through its S3 client, as NewS3. New is only
// in a build with the tag gcs or azure.
func New(b *blob.Bucket, opts *Options) (*Store, error) {
	if opts != nil && opts.S3Bucket != "" {
		var client *s3.Client
		if !b.As(&client) {
			return nil, fmt.Errorf("objectstore: Options.S3Bucket is set but the bucket is not an S3 bucket")
		}
		return newStore(&s3objects{client: client, name: opts.S3Bucket, closer: b.Close}, opts)
	}
	return newStore(blobObjects{b}, opts)
}

// openBlobURL opens a gs:// or azblob:// URL with gocloud's default URL
// mux, where importing gcsblob and azureblob (gcs.go, azure.go)
// registered their openers.
func openBlobURL(ctx context.Context, u *url.URL) (objects, error) {
	b, err := blob.DefaultURLMux().OpenBucketURL(ctx, u)
	if err != nil {
		return nil, err
	}
	return blobObjects{b}, nil
}

// blobObjects is a gocloud.dev/blob bucket.
type blobObjects struct{ b *blob.Bucket }

// fromBlob maps gocloud's "not found" (and, on its directory driver, a key
// under a file's key) to errNotFound.
func fromBlob(err error) error {
	if err != nil && (gcerrors.Code(err) == gcerrors.NotFound || errors.Is(err, syscall.ENOTDIR)) {
		return errNotFound
	}
	return err
}

func (o blobObjects) size(ctx context.Context, key string) (int64, error) {
	attrs, err := o.b.Attributes(ctx, key)
	if err != nil {
		return 0, fromBlob(err)
	}
	return attrs.Size, nil
}

func (o blobObjects) read(ctx context.Context, key string, limit int64) ([]byte, error) {
	r, err := o.b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, fromBlob(err)
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, errTooLarge
	}
	return readLimited(r, r.Size(), limit)
}

// A write carries a random ID in its metadata: the services' clients
// send a request again when its answer is lost (a 5xx, a broken
// connection), and a create made by the lost request is then refused on
// its own object. Finding its ID there, the create is made, once, not
// ErrExist. A write that fails after its request may have been made (see
// mayBeMade) is looked for the same way: found, it is made; not found, it
// may still be (or have been made and then replaced), and the error wraps
// memtool.ErrOutcomeUnknown, never one that says nothing changed.
func (o blobObjects) write(ctx context.Context, key string, data []byte, createOnly bool) error {
	if err := ctx.Err(); err != nil {
		return err // not sent
	}
	id := rand.Text()
	opts := &blob.WriterOptions{
		ContentType: "application/octet-stream",
		IfNotExist:  createOnly,
		Metadata:    map[string]string{blobWriteID: id},
	}
	err := o.b.WriteAll(ctx, key, data, opts)
	if err == nil {
		return nil
	}
	refused := createOnly && gcerrors.Code(err) == gcerrors.FailedPrecondition
	lost := !refused && mayBeMade(ctx, err)
	if !refused && !lost {
		return err
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), confirmTimeout)
	attrs, aerr := o.b.Attributes(lctx, key)
	cancel()
	switch {
	case aerr == nil && attrs.Metadata[blobWriteID] == id:
		return nil
	case refused:
		return errExists
	}
	return fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, err)
}

// mayBeMade reports whether err, the failure of a change whose request
// was sent (ctx had not ended), may come after the service made it: ctx
// ended while the request was out, or the service (after its client's own
// retries) answered a 5xx, or no answer came. An answer that refuses the
// request (a 4xx: a condition, a permission, a missing object) says that
// nothing was made.
func mayBeMade(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	switch gcerrors.Code(err) {
	case gcerrors.Unknown, gcerrors.Internal, gcerrors.Canceled, gcerrors.DeadlineExceeded:
		// (gocloud reads an unavailable service, and a broken
		// connection, as Unknown.)
		return true
	}
	return false
}

// blobWriteID is the metadata of a write's ID (lower case, and without
// the "-" that Azure refuses in a metadata name).
const blobWriteID = "memtoolwrite"

// A delete answered "not found" is one only if the object is gone:
// gocloud's GCS driver reads a 403 (a missing permission, a retention
// policy, an object hold) as NotFound, which would make a refused delete
// look done. It is looked for in a listing, not by reading it, whose 403
// (a permission denied on that object) reads as NotFound too. A delete
// that fails after its request may have been made (mayBeMade) wraps
// memtool.ErrOutcomeUnknown.
func (o blobObjects) remove(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err // not sent
	}
	err := o.b.Delete(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		there := false
		lerr := o.list(ctx, key, false, func(obj listed) bool {
			there = obj.key == key // the key comes first if it is there
			return false
		})
		if lerr != nil {
			return fmt.Errorf("the delete answered %v, and the listing that would show the object gone failed: %v", err, lerr)
		}
		if there {
			return fmt.Errorf("the delete was refused, the object is still there: %v", err)
		}
	}
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound && mayBeMade(ctx, err) {
		return fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, err)
	}
	return fromBlob(err)
}

func (o blobObjects) list(ctx context.Context, prefix string, delim bool, fn func(listed) bool) error {
	opts := &blob.ListOptions{Prefix: prefix}
	if delim {
		opts.Delimiter = "/"
	}
	it := o.b.List(opts)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(listed{key: obj.Key, size: obj.Size, dir: obj.IsDir}) {
			return nil
		}
	}
}

func (o blobObjects) close() error { return o.b.Close() }
