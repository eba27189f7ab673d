// Package s3test serves an in-process S3-compatible server for tests: the
// gofakes3 server over HTTP, with the one conditional request of S3 that
// gofakes3 does not implement added in front of it.
//
// S3 deletes an object on DELETE with If-Match only while the object's
// ETag matches (412 Precondition Failed otherwise, 404 NoSuchKey if there
// is no object); gofakes3 ignores the header and deletes whatever is there.
// Server checks the header itself, under a lock that every write to the
// server takes, so that the check and the delete are one step, as on S3.
// Conditional writes (PUT with If-Match or If-None-Match) are gofakes3's
// own, but for Options.MissingOnIfMatch.
package s3test

import (
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Options configure a Server. The zero value (or nil) is a server that
// honours If-Match on DELETE, as S3 does.
type Options struct {
	// IgnoreDeleteConditions serves gofakes3 as it is: a DELETE with
	// If-Match deletes the object whatever its ETag, as some S3-compatible
	// services do.
	IgnoreDeleteConditions bool

	// MissingOnIfMatch answers a PUT with If-Match on a key that has no
	// object 404 NoSuchKey, where gofakes3 answers 412: a service may say
	// either, and a client must read both as "changed since you read it".
	MissingOnIfMatch bool

	// Before, if set, is called with every request before the server
	// serves it (and before it takes its lock), so that a test can make
	// another client's request land at an exact point of a conversation.
	Before func(r *http.Request)

	// MaxKeys, if positive, caps the page of a listing at that many
	// entries (S3 and gofakes3 answer at most 1000), so that a test can
	// list many pages without writing thousands of objects.
	MaxKeys int

	// Fail, if set, is called with every request (after Before); if it
	// returns an S3 error code (such as "SlowDown", "InternalError" or
	// "AccessDenied"),
	// the server answers that error without serving the request.
	Fail func(r *http.Request) string

	// LoseAnswer, if set, is called with every request that Fail let
	// through; if it returns true, the server serves the request (its
	// change is made) and then answers 500 InternalError instead of what
	// it would have, as when S3 fails after a change took effect or the
	// answer is lost on its way. The client cannot tell it from a request
	// that changed nothing.
	LoseAnswer func(r *http.Request) bool

	// StallAnswer, if set, is called with every request that LoseAnswer
	// let through; if it returns true, the server serves the request (its
	// change is made) and then answers nothing until the client gives up,
	// as when the client's timeout strikes or it is cancelled while S3
	// makes the change.
	StallAnswer func(r *http.Request) bool
}

// Server is a running S3-compatible server, closed when its test ends.
type Server struct {
	URL     string
	backend *s3mem.Backend
	fake    http.Handler
	opts    Options

	// writes serialises every request that changes an object, so that the
	// condition of a DELETE is checked and acted on in one step.
	writes sync.Mutex
}

// Start starts a server that lives until t ends.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	srv := &Server{backend: s3mem.New(), opts: *opts}
	srv.fake = gofakes3.New(srv.backend).Server()
	var h http.Handler = srv.fake
	if !opts.IgnoreDeleteConditions {
		h = http.HandlerFunc(srv.serve)
	}
	if opts.MaxKeys > 0 || opts.Fail != nil || opts.LoseAnswer != nil || opts.StallAnswer != nil {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.faults(w, r, inner) })
	}
	if before := opts.Before; before != nil {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			before(r)
			inner.ServeHTTP(w, r)
		})
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	srv.URL = hs.URL
	return srv
}

// CreateBucket creates the bucket name.
func (srv *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := srv.backend.CreateBucket(name); err != nil {
		t.Fatal(err)
	}
}

// Client returns a new S3 client of the server, as another process would
// have: its own connections, path-style addressing, test credentials.
func (srv *Server) Client() *s3.Client {
	return s3.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	}, func(o *s3.Options) { o.UsePathStyle = true })
}

func (srv *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		srv.fake.ServeHTTP(w, r)
		return
	}
	srv.writes.Lock()
	defer srv.writes.Unlock()
	if ifMatch := r.Header.Get("If-Match"); r.Method == http.MethodDelete && ifMatch != "" {
		if code := srv.ifMatchCondition(r, ifMatch); code != "" {
			writeError(w, r, code)
			return
		}
	}
	if ifMatch := r.Header.Get("If-Match"); r.Method == http.MethodPut && ifMatch != "" && srv.opts.MissingOnIfMatch {
		if srv.ifMatchCondition(r, ifMatch) == "NoSuchKey" {
			writeError(w, r, "NoSuchKey")
			return
		}
	}
	srv.fake.ServeHTTP(w, r)
}

// faults serves r through next, with the faults and the page size that
// the options ask for.
func (srv *Server) faults(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if srv.opts.Fail != nil {
		if code := srv.opts.Fail(r); code != "" {
			writeError(w, r, code)
			return
		}
	}
	if q := r.URL.Query(); srv.opts.MaxKeys > 0 && r.Method == http.MethodGet && q.Has("list-type") {
		if n, err := strconv.Atoi(q.Get("max-keys")); err != nil || n <= 0 || n > srv.opts.MaxKeys {
			q.Set("max-keys", strconv.Itoa(srv.opts.MaxKeys))
			r.URL.RawQuery = q.Encode()
		}
	}
	if srv.opts.LoseAnswer != nil && srv.opts.LoseAnswer(r) {
		next.ServeHTTP(httptest.NewRecorder(), r)
		writeError(w, r, "InternalError")
		return
	}
	if srv.opts.StallAnswer != nil && srv.opts.StallAnswer(r) {
		next.ServeHTTP(httptest.NewRecorder(), r)
		<-r.Context().Done()
		return
	}
	next.ServeHTTP(w, r)
}

// ifMatchCondition returns "" if the object named by r's path-style URL
// exists with an ETag that ifMatch names (or ifMatch is "*"), else the S3
// error code of the answer.
func (srv *Server) ifMatchCondition(r *http.Request, ifMatch string) string {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || key == "" || r.URL.Query().Has("versionId") {
		return "NotImplemented"
	}
	obj, err := srv.backend.HeadObject(bucket, key)
	if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return "NoSuchKey"
	}
	if err != nil {
		return "InternalError"
	}
	etag := hex.EncodeToString(obj.Hash)
	for _, want := range strings.Split(ifMatch, ",") {
		want = strings.Trim(strings.TrimSpace(want), `"`)
		if want == "*" || want == etag {
			return ""
		}
	}
	return "PreconditionFailed"
}

var statusOf = map[string]int{
	"NoSuchKey":          http.StatusNotFound,
	"PreconditionFailed": http.StatusPreconditionFailed,
	"NotImplemented":     http.StatusNotImplemented,
	"AccessDenied":       http.StatusForbidden,
	"InternalError":      http.StatusInternalServerError,
	"SlowDown":           http.StatusServiceUnavailable,
	"ServiceUnavailable": http.StatusServiceUnavailable,
}

// writeError answers as S3 does: the status, and an XML body naming the
// error code.
func writeError(w http.ResponseWriter, r *http.Request, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(statusOf[code])
	body := struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string
		Message  string
		Resource string
	}{Code: code, Message: fmt.Sprintf("%s (%s)", code, r.Method), Resource: r.URL.Path}
	xml.NewEncoder(w).Encode(body)
}
