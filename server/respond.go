package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// jsonContentType is the Content-Type header's value, shared by every
// answer (net/http only reads it).
var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers an HTTP error: {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// requestIDs makes the request ids, 16 hex digits: 6 random ones for the
// process, so that replicas' ids differ, and a counter of 10, so that a
// request costs no random bytes. An id tells nothing of the request and
// guards nothing.
type requestIDs struct {
	prefix [3]byte
	seq    atomic.Uint64
}

func newRequestIDs() *requestIDs {
	r := &requestIDs{}
	rand.Read(r.prefix[:])
	return r
}

func (r *requestIDs) next() string {
	var b [8]byte
	copy(b[:3], r.prefix[:])
	n := r.seq.Add(1)
	for i := 7; i >= 3; i-- {
		b[i] = byte(n)
		n >>= 8
	}
	var out [16]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// outcomeOf is the outcome of a request answered status, whose context
// is ctx: a failure answered once the context ended (its client left, or
// a shutdown gave up on it) is "cancelled", not a failure of the server.
func outcomeOf(ctx context.Context, status int) string {
	switch {
	case status >= 500 && ctx.Err() != nil:
		return "cancelled"
	case status < 400:
		return "ok"
	case status == http.StatusUnauthorized:
		return "unauthorized"
	case status == http.StatusForbidden:
		return "forbidden"
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	case status < 500:
		return "client_error"
	}
	return "server_error"
}

// recorder notes what a handler answered, for the log and the metrics,
// and when it began: net/http sets the write deadline as the request's
// headers end, just before.
type recorder struct {
	http.ResponseWriter
	start            time.Time
	status           int
	bytes            int64
	wrote            bool
	command, outcome string
	late             lateAnswer
}

func (r *recorder) WriteHeader(status int) {
	r.late.begin()
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.late.begin()
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// lateAnswer bounds the writing of an answer once its request's context
// has ended (end): its write deadline is grace after the context ended,
// if the answer had begun (begin), else grace after it begins. An answer
// whose handler is still making its change when the context ends (a
// store that cannot stop part way) is not cut off before it is written:
// its client would take a change made for one failed.
type lateAnswer struct {
	rc                *http.ResponseController
	grace             time.Duration
	ended, begun, set atomic.Bool
}

// end is called once the request's context ends: a read of the body
// stops waiting at once.
func (l *lateAnswer) end() {
	l.ended.Store(true)
	l.rc.SetReadDeadline(time.Now())
	if l.begun.Load() {
		l.arm()
	}
}

// begin is called as the handler writes its answer.
func (l *lateAnswer) begin() {
	if !l.begun.Load() {
		l.begun.Store(true)
	}
	if l.ended.Load() {
		l.arm()
	}
}

// arm sets the write deadline, once: end and begin may both see the
// other done.
func (l *lateAnswer) arm() {
	if l.set.CompareAndSwap(false, true) {
		l.rc.SetWriteDeadline(time.Now().Add(l.grace))
	}
}
