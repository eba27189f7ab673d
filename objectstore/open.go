package objectstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"

	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/blob/s3blob"
)

// Schemes are the URL schemes Open knows, each served by one
// gocloud.dev/blob driver: S3, Google Cloud Storage, Azure Blob Storage,
// and gocloud's in-memory and directory drivers (mem+blob, file+blob, so
// as not to clash with memtool's own mem: and file: stores).
var Schemes = []string{s3blob.Scheme, gcsblob.Scheme, azureblob.Scheme, "mem+blob", "file+blob"}

// Open opens the tenant-less store at a URL:
//
//	s3://bucket?region=…&prefix=…    S3 (also endpoint=…, use_path_style=true for S3-compatible services)
//	gs://bucket?prefix=…             Google Cloud Storage
//	azblob://container?prefix=…      Azure Blob Storage
//	mem+blob://                      gocloud's in-memory bucket (gone when the process exits)
//	file+blob:///abs/dir             gocloud's directory bucket (created if missing)
//
// The prefix parameter is the store's key prefix (Options.Prefix); the
// other parameters are those of the driver's own URL opener, which takes
// credentials from the environment as the driver documents.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("objectstore: %v", err)
	}
	q := u.Query()
	opts := &Options{Prefix: q.Get("prefix")}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	var b *blob.Bucket
	switch u.Scheme {
	case "mem+blob":
		if u.Host != "" || u.Path != "" || u.RawQuery != "" {
			return nil, fmt.Errorf("objectstore: %q: mem+blob:// takes only a prefix", rawURL)
		}
		b = memblob.OpenBucket(nil)
	case "file+blob":
		if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) || u.RawQuery != "" {
			return nil, fmt.Errorf("objectstore: %q: a file+blob URL needs an absolute path, as in file+blob:///abs/dir", rawURL)
		}
		// No sidecar attribute files: memtool needs none, and they would
		// forbid names ending in .attrs.
		b, err = fileblob.OpenBucket(u.Path, &fileblob.Options{CreateDir: true, DirFileMode: 0o700, Metadata: fileblob.MetadataDontWrite})
	case s3blob.Scheme, gcsblob.Scheme, azureblob.Scheme:
		if u.Host == "" {
			return nil, fmt.Errorf("objectstore: %q: no bucket name", rawURL)
		}
		// The drivers' own URL openers, which this package's imports of
		// them register with gocloud's default mux.
		b, err = blob.DefaultURLMux().OpenBucketURL(ctx, u)
		if u.Scheme == s3blob.Scheme {
			opts.S3Bucket = u.Host
		}
	default:
		return nil, fmt.Errorf("objectstore: %q: unknown scheme (known: %v)", rawURL, Schemes)
	}
	if err != nil {
		return nil, fmt.Errorf("objectstore: %w", err)
	}
	s, err := New(b, opts)
	if err != nil {
		b.Close()
		return nil, err
	}
	return s, nil
}
