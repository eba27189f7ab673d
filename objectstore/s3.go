package objectstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/wait"
)

// updateS3 is Update on S3: read the object and its ETag, write the new
// content with If-Match on that ETag, and start again if another writer
// got in between (412 Precondition Failed, or 409 when S3 sees two
// conditional writes at once). gocloud.dev/blob has no if-match write, so
// this talks to the bucket's S3 client itself; s3blob leaves keys without
// control characters and "../" unescaped, which is all keys memtool makes.
// The copy of a rename that has not deleted its source yet is not edited
// (see commitCopy).
func (s *Store) updateS3(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if name == "" {
		return pathErr("update", name, memtool.ErrIsDir)
	}
	key := s.fileKey(name)
	for {
		out, err := s.bk.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bk.s3name), Key: aws.String(key)})
		if isNoSuchKey(err) {
			return s.missingFile(ctx, "update", name)
		}
		if err != nil {
			return blobErr(ctx, "update", name, err)
		}
		if aws.ToInt64(out.ContentLength) > limit {
			out.Body.Close()
			return pathErr("update", name, memtool.ErrTooLarge)
		}
		old, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil {
			return blobErr(ctx, "update", name, err)
		}
		if from := pending(out.Metadata); from != "" {
			err := s.bk.commitCopy(ctx, key, from, aws.ToString(out.ETag), old)
			if errors.Is(err, errRenaming) {
				return s.renaming(name)
			}
			if err != nil {
				return blobErr(ctx, "update", name, err)
			}
			continue
		}
		updated, err := fn(old)
		if err != nil {
			return err
		}
		if bytes.Equal(updated, old) {
			return nil // unchanged: nothing to write
		}
		_, err = s.bk.s3put(ctx, key, updated, aws.ToString(out.ETag), nil)
		if isPrecondition(err) || isConflict(err) || isNoSuchKey(err) {
			// Changed (or deleted) since we read it: read again. A
			// deletion may be answered 404 NoSuchKey rather than 412, as
			// the rename's own conditional writes allow for.
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		return blobErr(ctx, "update", name, err)
	}
}

// movingFrom is the user metadata of a rename's copy written before the
// rename deleted its source: the source's key, path-escaped (in base64 if
// that is too long, see sourceValue). Until the
// rename has deleted the source and written the copy again with the value
// committed, an edit of the copy is refused, so that an edit is never made
// to both names at once. (The commit writes a value rather than none
// because some S3-compatible servers keep an object's metadata across a
// PUT that sets none; S3 replaces it.)
const (
	movingFrom = "memtool-moving-from"
	committed  = "-"
)

// committedMeta is the metadata of a copy whose rename is done.
func committedMeta() map[string]string { return map[string]string{movingFrom: committed} }

// pending returns the source a rename's copy names in its metadata until
// the rename is done, else "".
func pending(meta map[string]string) string {
	if from := meta[movingFrom]; from != committed {
		return from
	}
	return ""
}

// errRenaming: the object is the copy of a rename whose source is still
// there.
var errRenaming = errors.New("the copy of an unfinished rename")

// renaming is the refusal of a change to the file name, the copy of a
// rename whose source is still there.
func (s *Store) renaming(name string) error {
	return errors.Join(memtool.ErrBusy, memtool.Refusal(fmt.Sprintf("The file %s is the new copy of a rename that has not finished (it is running in another process, or was interrupted): it cannot be changed or renamed until the rename deletes the old copy. Try again; if this persists, the rename was interrupted: view both files and delete one.", memtool.VirtualPath(name))))
}

// commitCopy is called by a change that found the copy of a rename (the
// object at key, ETag etag, content data, whose source is the key escaped
// in from). While the source is there the rename is running (or was
// interrupted before deleting it): errRenaming. Once the source is gone,
// the rename was interrupted (or is about to finish) after deleting it:
// the copy is the file, and commitCopy commits it, as the rename would
// have.
func (bk *bucket) commitCopy(ctx context.Context, key, from, etag string, data []byte) error {
	src, err := sourceKey(from)
	if err != nil || !strings.HasPrefix(src, bk.prefix) {
		return fmt.Errorf("object %s: invalid %s metadata %q", key, movingFrom, from)
	}
	ok, err := exists(ctx, bk.b, src)
	if err != nil {
		return err
	}
	if ok {
		return errRenaming
	}
	_, err = bk.s3put(ctx, key, data, etag, committedMeta())
	if isNoSuchKey(err) || isPrecondition(err) {
		// Another process committed, moved or removed it: read it again.
		return nil
	}
	return err
}

// isS3Code reports whether err is S3's answer with the error code, or,
// for an answer without one (a HEAD has no body), with the HTTP status.
func isS3Code(err error, status int, code string) bool {
	if err == nil {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() != "" && ae.ErrorCode() != "NotFound" {
		return ae.ErrorCode() == code
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == status
}

func isPrecondition(err error) bool {
	return isS3Code(err, http.StatusPreconditionFailed, "PreconditionFailed")
}

func isNoSuchKey(err error) bool { return isS3Code(err, http.StatusNotFound, "NoSuchKey") }

// isConflict reports S3's answer to two conditional requests on one key
// at once: the request may be sent again.
func isConflict(err error) bool {
	return isS3Code(err, http.StatusConflict, "ConditionalRequestConflict")
}

// conflictRetries bounds how often one request is sent again after S3
// answered 409 ConditionalRequestConflict.
const conflictRetries = 5

// ifAbsent is s3put's condition for a create: write only where there is
// no object (If-None-Match: *).
const ifAbsent = "*"

// s3get reads the object at key, its ETag and its writeID.
func (bk *bucket) s3get(ctx context.Context, key string) (data []byte, etag, id string, err error) {
	out, err := bk.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bk.s3name), Key: aws.String(key)})
	if err != nil {
		return nil, "", "", err
	}
	defer out.Body.Close()
	data, err = io.ReadAll(out.Body)
	return data, aws.ToString(out.ETag), out.Metadata[writeID], err
}

// s3put writes data (with the user metadata meta) at key if the object
// there has the ETag cond, or, if cond is ifAbsent, if there is no object,
// and returns the new ETag.
func (bk *bucket) s3put(ctx context.Context, key string, data []byte, cond string, meta map[string]string) (string, error) {
	return bk.s3o.put(ctx, key, data, cond, meta)
}

// s3delete deletes the object at key if its ETag is etag: S3 answers 412
// if it has another, 404 if there is none. id, if not "", is the writeID
// of the object meant, which tells it from a new object of the same bytes
// after a lost answer (see s3objects.del).
func (bk *bucket) s3delete(ctx context.Context, key, etag, id string) error {
	return bk.s3o.del(ctx, key, etag, id, true)
}

// resend sends a request (send) until it is answered, sending it again
// after S3's 409 to two conditional requests at once (up to
// conflictRetries times) and, after the SDK's delays, after a retryable
// failure (up to s3Attempts requests in all). It sends again itself rather
// than through the SDK's retryer, to know when an answer was lost: a 5xx
// or a broken connection may come after S3 made the change, and the
// request sent again then fails its condition. lost reports that: a
// retryable failure that is not throttling (which S3 answers before it
// acts) came before the answer err, or is err; send is told whether one
// came before it.
func resend(ctx context.Context, send func(lost bool) error) (lost bool, err error) {
	for attempt, conflicts := 1, 0; ; attempt++ {
		err := send(lost)
		switch {
		case err == nil:
			return lost, nil
		case isConflict(err) && conflicts < conflictRetries:
			conflicts++
			continue
		case retryables.IsErrorRetryable(err) != aws.TrueTernary:
			return lost, err
		}
		lost = lost || throttles.IsErrorThrottle(err) != aws.TrueTernary
		if attempt >= s3Attempts {
			return lost, err
		}
		if err := sleep(ctx, backoff, attempt, err); err != nil {
			return lost, err
		}
	}
}

// resend sends a request at most s3Attempts times for failures that may
// pass (the SDK's default), after the SDK's delays.
const s3Attempts = 3

var (
	retryables = retry.IsErrorRetryables(retry.DefaultRetryables)
	throttles  = retry.IsErrorThrottles(retry.DefaultThrottles)
	backoff    = retry.NewExponentialJitterBackoff(20 * time.Second)
)

// sendOnce is the option of a request that the SDK sends once (resend
// sends it again).
func sendOnce(o *s3.Options) { o.RetryMaxAttempts = 1 }

// sleep waits out the backoff b's delay before attempt+1, unless ctx ends.
func sleep(ctx context.Context, b *retry.ExponentialJitterBackoff, attempt int, cause error) error {
	d, err := b.BackoffDelay(attempt, cause)
	if err != nil {
		return cause
	}
	return wait.Sleep(ctx, d)
}

// s3etag returns the ETag of the object at key.
func (bk *bucket) s3etag(ctx context.Context, key string) (string, error) {
	out, err := bk.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bk.s3name), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// errNoDeleteConditions refuses a rename on a service that deletes an
// object whatever the If-Match of the DELETE says.
var errNoDeleteConditions = memtool.Refusal("Renaming is refused on this storage: it speaks the S3 protocol but ignores the If-Match condition on deletes, so a rename could lose an edit that another process makes at the same moment. Nothing was changed.")

// probeKey starts the key of the object that checkDeleteConditions writes
// and deletes, under the store's prefix and outside every memory.
const probeKey = ".memtool-probe-"

// checkDeleteConditions makes sure, once per bucket, that the service
// honours If-Match on DELETE (S3 does; some S3-compatible services ignore
// it): it writes an object of its own, asks to delete it on an ETag it
// does not have, and expects 412. It returns errNoDeleteConditions if the
// object was deleted.
func (bk *bucket) checkDeleteConditions(ctx context.Context) error {
	bk.probeMu.Lock()
	defer bk.probeMu.Unlock()
	if bk.probed {
		return bk.probeErr
	}
	key := bk.prefix + probeKey + rand.Text()
	etag, err := bk.s3put(ctx, key, []byte(key), ifAbsent, nil)
	if err != nil {
		return err
	}
	err = bk.s3delete(ctx, key, `"`+strings.Repeat("0", 32)+`"`, "")
	switch {
	case err == nil:
		bk.probed, bk.probeErr = true, errNoDeleteConditions
	case isPrecondition(err):
		bk.probed = true
		// The probe is this store's own object; if deleting it fails it
		// stays, invisible to every memory.
		bk.s3delete(ctx, key, etag, "")
	default:
		bk.s3delete(ctx, key, etag, "")
		if errors.Is(err, memtool.ErrOutcomeUnknown) {
			// Only the probe's own object may have been deleted: no memory
			// changed, and the next rename checks again.
			return fmt.Errorf("checking that the service honours If-Match on DELETE: %v", err)
		}
		return err
	}
	return bk.probeErr
}

// markerBody returns the content of a new directory marker on S3: a
// random text, so that each marker has its own ETag and a conditional
// delete of one never removes another written at the same key later.
func markerBody() []byte { return []byte(rand.Text()) }

// Where settle leaves an object that this process has just written.
type placement int

const (
	kept   placement = iota // at its key, in its directory
	undone                  // deleted again: its directory is gone
	moved                   // gone from its key: a rename moved it with its directory (or another process removed it)
)

// settle is called after this process wrote a new object at key (ETag
// etag) into the directory whose marker is dirMarker. A rename of that
// directory in another process deletes the marker and only then lists
// what is left in the directory to move it, so either that listing finds
// the object, or settle finds the marker gone. In that case settle deletes
// the object again, on its ETag, so that nothing is left where there is no
// directory. If the object was changed by another process since, it stays
// and its directories are made again (adopt).
func (s *Store) settle(ctx context.Context, key, etag, dirMarker string) (placement, error) {
	ok, err := exists(ctx, s.bk.b, dirMarker)
	if err != nil || ok {
		return kept, err
	}
	if err := s.bk.checkDeleteConditions(ctx); err == errNoDeleteConditions {
		// No rename runs on this service (they are refused), so the
		// directory was removed, and an unconditional delete could take an
		// edit with it: leave the object where it is.
		return kept, nil
	} else if err != nil {
		return kept, err
	}
	err = s.bk.s3delete(context.WithoutCancel(ctx), key, etag, "")
	switch {
	case err == nil:
		return undone, nil
	case isNoSuchKey(err):
		return moved, nil
	case isPrecondition(err):
		return kept, s.adopt(ctx, key)
	case errors.Is(err, errReplaced):
		// Another process's object is at key now, written before or after
		// this delete was made: it stays.
		return kept, errors.Join(err, s.adopt(ctx, key))
	}
	return kept, err
}

// adopt writes the marker of every directory above key (under the
// store's root) that has none, so that an object left behind by a rename
// of its directory is listed and reachable again.
func (s *Store) adopt(ctx context.Context, key string) error {
	ctx = context.WithoutCancel(ctx)
	rel := strings.TrimPrefix(key, s.root)
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		_, err := s.bk.s3put(ctx, s.markerKey(rel[:i]), markerBody(), ifAbsent, nil)
		if err != nil && !isPrecondition(err) {
			return err
		}
	}
	return nil
}
