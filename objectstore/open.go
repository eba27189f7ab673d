package objectstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Schemes are the URL schemes Open knows: S3, Google Cloud Storage, Azure
// Blob Storage, and a bucket in memory or in a directory (mem+blob,
// file+blob, so as not to clash with memtool's own mem: and file:
// stores). Open opens gs:// and azblob:// URLs only in a build with their
// tag (see NotBuilt).
var Schemes = []string{s3Scheme, gcsScheme, azureScheme, "mem+blob", "file+blob"}

const s3Scheme = "s3"

// ErrNotBuilt is the error (wrapped) of Open for a URL whose driver this
// build of the package leaves out: Google Cloud Storage and Azure Blob
// Storage are compiled in only with the build tags gcs and azure
// (go build -tags gcs,azure), as their client libraries (gRPC among them)
// add about 35 MB to memtool's binary, and time to its start-up. Its text
// says which tag to build with.
var ErrNotBuilt = errors.New("driver not in this build")

// optional are the drivers compiled in only with a build tag: whether
// this build has them is in gcs.go/nogcs.go and azure.go/noazure.go.
var optional = []struct {
	scheme, service, tag string
	built                bool
}{
	{gcsScheme, "Google Cloud Storage", "gcs", hasGCS},
	{azureScheme, "Azure Blob Storage", "azure", hasAzure},
}

// NotBuilt returns the error of Open for URLs of scheme if this build
// leaves their driver out (one that errors.Is ErrNotBuilt and says which
// build tag adds it), else nil.
func NotBuilt(scheme string) error {
	for _, d := range optional {
		if d.scheme == scheme && !d.built {
			return notBuiltError{d.service, d.tag}
		}
	}
	return nil
}

// notBuiltError says how to build with a driver that is left out.
type notBuiltError struct{ service, tag string }

func (e notBuiltError) Error() string {
	return "memtool was built without " + e.service + "; rebuild with -tags " + e.tag
}

func (e notBuiltError) Is(target error) bool { return target == ErrNotBuilt }

// Open opens the tenant-less store at a URL:
//
//	s3://bucket?region=…&prefix=…    S3 (also endpoint=…, use_path_style=true for S3-compatible services)
//	gs://bucket?prefix=…             Google Cloud Storage (in a build with -tags gcs)
//	azblob://container?prefix=…      Azure Blob Storage (in a build with -tags azure)
//	mem+blob://                      a bucket in memory (gone when the process exits)
//	file+blob:///abs/dir             a bucket in a directory (created if missing)
//
// The prefix parameter is the store's key prefix (Options.Prefix). An
// s3:// URL also takes region, endpoint, use_path_style, disable_https,
// profile, anonymous, dualstack and fips (as gocloud.dev's S3 URLs did),
// and takes credentials from the environment and the AWS files as the AWS
// SDK does; gs:// and azblob:// take the parameters of gocloud.dev's
// drivers and their credentials as those document.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL, which may hold a secret
		}
		return nil, fmt.Errorf("objectstore: the URL does not parse: %v", err)
	}
	if u.User != nil {
		// Never used (credentials come from the environment, as the
		// drivers document), and never shown.
		return nil, fmt.Errorf("objectstore: %s:// URL with a user or password: those are not used and not allowed in a bucket URL; give credentials as the driver documents (environment, credential files)", u.Scheme)
	}
	q := u.Query()
	opts := &Options{Prefix: q.Get("prefix")}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	var objs objects
	switch u.Scheme {
	case "mem+blob":
		if u.Host != "" || u.Path != "" || u.RawQuery != "" {
			return nil, fmt.Errorf("objectstore: %q: mem+blob:// takes only a prefix", rawURL)
		}
		objs = newMemObjects()
	case "file+blob":
		if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) || u.RawQuery != "" {
			return nil, fmt.Errorf("objectstore: %q: a file+blob URL needs an absolute path, as in file+blob:///abs/dir", rawURL)
		}
		objs, err = openDirObjects(u.Path)
	case s3Scheme, gcsScheme, azureScheme:
		if err := NotBuilt(u.Scheme); err != nil {
			return nil, fmt.Errorf("objectstore: %q: %w", rawURL, err)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("objectstore: %q: no bucket name", rawURL)
		}
		if u.Scheme == s3Scheme {
			opts.S3Bucket = u.Host
			var client *s3.Client
			if client, err = openS3URL(ctx, q); err == nil {
				objs = &s3objects{client: client, name: u.Host}
			}
		} else {
			objs, err = openBlobURL(ctx, u)
		}
	default:
		return nil, fmt.Errorf("objectstore: %q: unknown scheme (known: %v)", rawURL, Schemes)
	}
	if err != nil {
		return nil, fmt.Errorf("objectstore: %w", err)
	}
	s, err := newStore(objs, opts)
	if err != nil {
		objs.close()
		return nil, err
	}
	return s, nil
}
