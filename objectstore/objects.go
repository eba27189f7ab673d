package objectstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
)

// objects is what a store needs of a bucket: a flat space of keys, each
// holding bytes. The default build has three: S3 (s3objects, straight on
// the AWS SDK), an in-memory bucket (memObjects, mem+blob) and a directory
// (dirObjects, file+blob). A build with the tag gcs or azure adds
// gocloud.dev/blob's buckets (blobObjects), which bring gRPC with them.
type objects interface {
	// size returns the size of the object at key, or errNotFound.
	size(ctx context.Context, key string) (int64, error)
	// read returns the content of the object at key: errNotFound if there
	// is none, errTooLarge (without reading it) if it holds more than
	// limit bytes.
	read(ctx context.Context, key string, limit int64) ([]byte, error)
	// write stores data at key; with createOnly, only if there is no
	// object at key, else errExists.
	write(ctx context.Context, key string, data []byte, createOnly bool) error
	// remove deletes the object at key, or fails with errNotFound.
	remove(ctx context.Context, key string) error
	// list calls fn with the objects whose keys start with prefix, in key
	// order, until fn returns false. With delim, the objects below the
	// next "/" after prefix come as one entry, their common prefix (up to
	// and including that "/") with dir set.
	list(ctx context.Context, prefix string, delim bool, fn func(o listed) bool) error
	close() error
}

// listed is one entry of a listing.
type listed struct {
	key  string
	size int64
	dir  bool // a common prefix of a listing with a delimiter
}

var (
	errNotFound = errors.New("no such object")
	errExists   = errors.New("an object already exists at the key")
	errTooLarge = errors.New("object larger than the limit")
)

// exists reports whether there is an object at key.
func exists(ctx context.Context, o objects, key string) (bool, error) {
	_, err := o.size(ctx, key)
	if notFound(err) {
		return false, nil
	}
	return err == nil, err
}

// readLimited reads r to its end, expecting size bytes: errTooLarge if it
// holds more than limit.
func readLimited(r io.Reader, size, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), limit)+1))
	// One byte past the limit shows an object over it; the largest limit
	// (no limit) has no byte past it.
	if _, err := buf.ReadFrom(io.LimitReader(r, min(limit, math.MaxInt64-1)+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// unlimited is the limit of a read that takes an object whatever its size.
const unlimited = 1 << 62

// duplicate writes the content of the object at src to dst.
func duplicate(ctx context.Context, o objects, dst, src string) error {
	data, err := o.read(ctx, src, unlimited)
	if err != nil {
		return err
	}
	return o.write(ctx, dst, data, false)
}
