package objectstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/memtool/memtool"
)

// updateS3 is Update on S3: read the object and its ETag, write the new
// content with If-Match on that ETag, and start again if another writer
// got in between (412 Precondition Failed, or 409 when S3 sees two
// conditional writes at once). gocloud.dev/blob has no if-match write, so
// this talks to the bucket's S3 client itself; s3blob leaves keys without
// control characters and "../" unescaped, which is all keys memtool makes.
func (s *Store) updateS3(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if name == "" {
		return pathErr("update", name, memtool.ErrIsDir)
	}
	key := s.fileKey(name)
	for {
		out, err := s.bk.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bk.s3name), Key: aws.String(key)})
		if isS3Code(err, http.StatusNotFound, "NoSuchKey") {
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
		updated, err := fn(old)
		if err != nil {
			return err
		}
		_, err = s.bk.s3.PutObject(ctx, &s3.PutObjectInput{
			Bucket:      aws.String(s.bk.s3name),
			Key:         aws.String(key),
			Body:        bytes.NewReader(updated),
			ContentType: aws.String("application/octet-stream"),
			IfMatch:     out.ETag,
		})
		if isS3Code(err, http.StatusPreconditionFailed, "PreconditionFailed") || isS3Code(err, http.StatusConflict, "ConditionalRequestConflict") {
			// Changed (or deleted) since we read it: read again.
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		return blobErr(ctx, "update", name, err)
	}
}

// isS3Code reports whether err is S3's answer with the error code, or
// with the HTTP status (a HEAD-like answer has no code).
func isS3Code(err error, status int, code string) bool {
	if err == nil {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == code {
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == status
}
