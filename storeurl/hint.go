package storeurl

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
)

// withHint adds to an error of reaching a database or a bucket what to
// check: the error itself often names only a symptom (connection refused,
// a redirect, an SQLSTATE). It returns other errors as they are.
func withHint(err error) error {
	if h := hint(err); h != "" {
		return hintError{err, h}
	}
	return err
}

// What to check, by PostgreSQL's SQLSTATE.
var pgHints = map[string]string{
	"28P01": "check the user and password in the URL (and the server's pg_hba.conf)", // invalid_password
	"28000": "check the user and password in the URL (and the server's pg_hba.conf)", // invalid_authorization_specification
	"3D000": "the database does not exist: create it, or fix the database name in the URL",
	"3F000": "the schema does not exist: create it, or fix search_path in the URL",
	"42501": "the user may not create or use the tables: grant it the rights on the schema, or name another schema with search_path",
}

const s3Credentials = "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and their rights on the bucket"

// What to check, by S3's error code.
var s3Hints = map[string]string{
	"PermanentRedirect":            "the bucket is in another region: fix region= in the URL",
	"AuthorizationHeaderMalformed": "the bucket is in another region: fix region= in the URL",
	"InvalidAccessKeyId":           s3Credentials,
	"SignatureDoesNotMatch":        s3Credentials,
	"AccessDenied":                 s3Credentials,
	"ExpiredToken":                 s3Credentials,
	"NoSuchBucket":                 "no such bucket: create it, or fix the bucket name in the URL",
}

// What to check, by a driver's words, for errors that carry no code.
var messageHints = []struct{ words, hint string }{
	{"get credentials:", s3Credentials},
	{"Invalid region: region was not a valid DNS name", "no region, or not a region's name: set region= in the URL (or AWS_REGION)"},
	{"could not find default credentials", "set GOOGLE_APPLICATION_CREDENTIALS, or log in with gcloud auth application-default login"},
	{"Options.AccountName is required", "set AZURE_STORAGE_ACCOUNT (and AZURE_STORAGE_KEY, or other Azure credentials)"},
}

func hint(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgHints[pgErr.Code] != "" {
		return pgHints[pgErr.Code]
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && s3Hints[apiErr.ErrorCode()] != "" {
		var respErr *smithyhttp.ResponseError
		if errors.As(err, &respErr) && respErr.Response != nil {
			if region := respErr.Response.Header.Get("X-Amz-Bucket-Region"); region != "" {
				return "the bucket is in region " + region + ": set region=" + region + " in the URL"
			}
		}
		return s3Hints[apiErr.ErrorCode()]
	}
	var serverErr *resource.Error
	if errors.As(err, &serverErr) && serverErr.Status == http.StatusUnauthorized {
		return "the memtool server refused the token: set $" + remotestore.TokenEnv + " to a key of that server"
	}
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && strings.HasSuffix(dnsErr.Name, ".amazonaws.com"):
		return "no such AWS endpoint: check region= in the URL"
	case errors.As(err, &dnsErr):
		return "the host name does not resolve: check the host in the URL (or its endpoint=)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing answers at that address: check the host and port in the URL (or its endpoint=), and that the server runs"
	}
	for _, m := range messageHints {
		if strings.Contains(err.Error(), m.words) {
			return m.hint
		}
	}
	return ""
}

// hintError is an error with what to check added.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() + "; " + e.hint }
func (e hintError) Unwrap() error { return e.err }
