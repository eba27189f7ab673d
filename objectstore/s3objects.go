package objectstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/memtool/memtool"
)

// s3objects is a bucket on S3 (or an S3-compatible service), spoken to
// through the AWS SDK's S3 client. Keys are sent as they are: earlier
// versions of this package (through gocloud.dev/blob's S3 driver) escaped
// only control characters and the "/" of "../", which no key memtool
// makes holds, and the text of an escape, which its edits and renames
// never escaped (so those already spoke in raw keys).
type s3objects struct {
	client *s3.Client
	name   string
	closer func() error // what close closes, if anything
}

func (o *s3objects) size(ctx context.Context, key string) (int64, error) {
	out, err := o.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.name), Key: aws.String(key)})
	if isNoSuchKey(err) {
		return 0, errNotFound
	}
	if err != nil {
		return 0, err
	}
	return aws.ToInt64(out.ContentLength), nil
}

func (o *s3objects) read(ctx context.Context, key string, limit int64) ([]byte, error) {
	out, err := o.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(o.name), Key: aws.String(key)})
	if isNoSuchKey(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	n := aws.ToInt64(out.ContentLength)
	if n > limit {
		return nil, errTooLarge
	}
	return readLimited(out.Body, n, limit)
}

func (o *s3objects) write(ctx context.Context, key string, data []byte, createOnly bool) error {
	cond := ""
	if createOnly {
		cond = ifAbsent
	}
	_, err := o.put(ctx, key, data, cond, nil)
	if createOnly && isPrecondition(err) {
		return errExists
	}
	return err
}

func (o *s3objects) remove(ctx context.Context, key string) error {
	// S3 answers a DELETE of a missing key with success: look first, as
	// gocloud's driver did. What the look saw is what del deletes.
	etag, id, err := o.head(ctx, key)
	if isNoSuchKey(err) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return o.del(ctx, key, etag, id, false)
}

// head returns the ETag and the writeID (see put) of the object at key.
func (o *s3objects) head(ctx context.Context, key string, opts ...func(*s3.Options)) (etag, id string, err error) {
	out, err := o.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.name), Key: aws.String(key)}, opts...)
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.ETag), out.Metadata[writeID], nil
}

// del deletes the object at key that has the ETag etag and the writeID
// id (any writeID if id is ""): with ifMatch, only if the ETag at key is
// still etag (S3 answers 412 if it is another, 404 if there is no
// object), else whatever is there.
//
// After an answer that may have been lost (resend), the DELETE may have
// been made, and another process may since have written a new object at
// key. Sent again, the DELETE would delete that object (with ifMatch, if
// it has the same bytes, and so the same ETag), and its 412 would not
// tell it from an edit of the object del meant. So del looks before
// sending again: if there is no object, the delete was made (by this
// request, or another process's), and del answers success; if the object
// is another, del cannot tell whether it deleted the one it meant, and
// fails with errReplaced. Every failure after an answer that may have
// been lost, or while the request was out when ctx ended, wraps
// memtool.ErrOutcomeUnknown.
func (o *s3objects) del(ctx context.Context, key, etag, id string, ifMatch bool) error {
	if err := ctx.Err(); err != nil {
		return err // not sent
	}
	in := &s3.DeleteObjectInput{Bucket: aws.String(o.name), Key: aws.String(key)}
	if ifMatch {
		in.IfMatch = aws.String(etag)
	}
	lost, err := resend(ctx, func(lost bool) error {
		if lost {
			gotETag, gotID, err := o.head(ctx, key, sendOnce)
			if err != nil {
				return err
			}
			if gotETag != etag || id != "" && gotID != id {
				return errReplaced
			}
		}
		_, err := o.client.DeleteObject(ctx, in, sendOnce)
		return err
	})
	switch {
	case err == nil:
		return nil
	case lost && isNoSuchKey(err):
		// Deleted by the request whose answer was lost: a caller that read
		// the 404 as "another process removed it" (a rename's source)
		// would delete the only copy left.
		return nil
	case isPrecondition(err):
		// The answer of a DELETE sent first, or after a look that found
		// the object as it was (so that no DELETE before it was made):
		// another process changed the object.
		return err
	case lost || ctx.Err() != nil:
		// Sent: S3 may have deleted it, or still may.
		return fmt.Errorf("%w (%w)", memtool.ErrOutcomeUnknown, err)
	}
	return err
}

// errReplaced: after a delete's answer was lost, another object than the
// one it meant to delete is at the key, so the delete may or may not have
// been made (del).
var errReplaced = errors.New("another object is at the key: the delete may have been made before another process wrote it")

func (o *s3objects) list(ctx context.Context, prefix string, delim bool, fn func(listed) bool) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(o.name), Prefix: aws.String(prefix)}
	if delim {
		in.Delimiter = aws.String("/")
	}
	// A common prefix whose objects span two pages comes again on the
	// next from some S3-compatible servers (S3 skips it): once is enough.
	lastDir := ""
	for {
		out, err := o.client.ListObjectsV2(ctx, in)
		if err != nil {
			return err
		}
		page := make([]listed, 0, len(out.Contents)+len(out.CommonPrefixes))
		for _, c := range out.Contents {
			page = append(page, listed{key: aws.ToString(c.Key), size: aws.ToInt64(c.Size)})
		}
		for _, p := range out.CommonPrefixes {
			page = append(page, listed{key: aws.ToString(p.Prefix), dir: true})
		}
		slices.SortFunc(page, func(a, b listed) int { return strings.Compare(a.key, b.key) })
		for _, l := range page {
			if l.dir && l.key == lastDir {
				continue
			}
			if l.dir {
				lastDir = l.key
			}
			if !fn(l) {
				return nil
			}
		}
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

func (o *s3objects) close() error {
	if o.closer == nil {
		return nil
	}
	return o.closer()
}

// put writes data (with the user metadata meta) at key: unconditionally
// if cond is "", if there is no object at key if cond is ifAbsent, else
// if the object there has the ETag cond. It returns the new ETag.
//
// A write carries a random writeID in its metadata, so that when an
// attempt's answer was lost (resend), put can look whether its own write,
// made by the lost attempt, is there before it sends the write again: an
// edit read as not made would be made again over itself (Update starts
// again), and a create would answer ErrExist for the file it made. If its
// write is not there, it may have been made and then replaced or removed
// by another process (which may have edited it: made again, it would be
// made twice, or undo that process's change), or never made. Only an edit
// that finds the object it replaces still there (its ETag, cond) is sent
// again; otherwise the error wraps memtool.ErrOutcomeUnknown. So does
// that of a write cancelled while its request was out (ctx ended) and
// not seen made: S3 may still make it, and the model must not be told
// that nothing changed.
func (o *s3objects) put(ctx context.Context, key string, data []byte, cond string, meta map[string]string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err // not sent
	}
	in := &s3.PutObjectInput{
		Bucket:      aws.String(o.name),
		Key:         aws.String(key),
		ContentType: aws.String("application/octet-stream"),
	}
	switch cond {
	case "":
	case ifAbsent:
		in.IfNoneMatch = aws.String("*")
	default:
		in.IfMatch = aws.String(cond)
	}
	id := rand.Text()
	in.Metadata = maps.Clone(meta)
	if in.Metadata == nil {
		in.Metadata = map[string]string{}
	}
	in.Metadata[writeID] = id
	var etag string
	lost, err := resend(ctx, func(lost bool) error {
		if lost {
			// The last request may have been made: sent again, this one
			// would write over what another process did since (an edit of
			// that write, a removal), or fail its condition on that write.
			gotETag, gotID, err := o.head(ctx, key, sendOnce)
			switch {
			case err == nil && gotID == id:
				etag = gotETag
				return nil
			case err != nil && !isNoSuchKey(err):
				return err
			case err != nil || gotETag != cond:
				return errWriteNotSeen
			}
			// The object that an edit replaces is still there: not made.
		}
		in.Body = bytes.NewReader(data)
		out, err := o.client.PutObject(ctx, in, sendOnce)
		if err == nil {
			etag = aws.ToString(out.ETag)
		}
		return err
	})
	if err != nil && (lost || ctx.Err() != nil) {
		// Perhaps written by the attempt whose answer was lost, or by the
		// one out when ctx ended: look, even if ctx has ended.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), confirmTimeout)
		gotETag, gotID, herr := o.head(hctx, key)
		cancel()
		if herr == nil && gotID == id {
			return gotETag, nil
		}
		// Not seen: not made, or made and since replaced or deleted by
		// another process (whose edit may hold it), or still to be made;
		// or the look failed. The condition's failure cannot tell.
		return "", fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, err)
	}
	return etag, err
}

// errWriteNotSeen: after a write's answer was lost, neither the write nor
// the object it was to replace is at the key (put).
var errWriteNotSeen = errors.New("after a lost answer, another object than the one written, or none, is at the key")

// confirmTimeout bounds put's look at whether its write was made after
// its context ended.
const confirmTimeout = 10 * time.Second

// writeID is the user metadata of a conditional write: a random text of
// that write alone.
const writeID = "memtool-write"

// s3Params are the query parameters of an s3:// URL besides prefix, the
// ones gocloud.dev's S3 URL opener took that memtool's docs name or that
// a URL written for it may carry.
const s3Params = "region, endpoint, use_path_style, disable_https, profile, anonymous, dualstack, fips, awssdk"

// isBoolParam says whether the parameter key of an s3:// URL takes a
// boolean.
func isBoolParam(key string) bool {
	switch key {
	case "use_path_style", "s3ForcePathStyle", "disable_https", "anonymous", "dualstack", "fips":
		return true
	}
	return false
}

// openS3URL returns the S3 client that an s3:// URL's parameters (q, its
// prefix taken out) describe, with credentials from the environment and
// the AWS files as the AWS SDK finds them.
func openS3URL(ctx context.Context, q url.Values) (*s3.Client, error) {
	var (
		loads   []func(*config.LoadOptions) error
		clients []func(*s3.Options)
	)
	boolParam := func(key string) (bool, error) {
		v, err := strconv.ParseBool(q.Get(key))
		if err != nil {
			return false, fmt.Errorf("invalid value for %s: %q", key, q.Get(key))
		}
		return v, nil
	}
	for key := range q {
		var on bool
		if isBoolParam(key) {
			v, err := boolParam(key)
			if err != nil {
				return nil, err
			}
			on = v
		}
		switch key {
		case "region":
			loads = append(loads, config.WithRegion(q.Get(key)))
		case "profile":
			loads = append(loads, config.WithSharedConfigProfile(q.Get(key)))
		case "endpoint":
			endpoint := q.Get(key)
			clients = append(clients, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint) })
		case "use_path_style", "s3ForcePathStyle":
			clients = append(clients, func(o *s3.Options) { o.UsePathStyle = on })
		case "disable_https":
			clients = append(clients, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = on })
		case "anonymous":
			if on {
				loads = append(loads, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
			}
		case "dualstack":
			if on {
				loads = append(loads, config.WithUseDualStackEndpoint(aws.DualStackEndpointStateEnabled))
			}
		case "fips":
			if on {
				loads = append(loads, config.WithUseFIPSEndpoint(aws.FIPSEndpointStateEnabled))
			}
		case "awssdk":
			// gocloud's choice of SDK version: there is one.
		default:
			return nil, fmt.Errorf("unknown query parameter %q (known: prefix, %s)", key, s3Params)
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(cfg, clients...), nil
}
