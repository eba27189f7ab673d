package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/server/resource"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := s.cfg.Ready(ctx); err != nil {
			s.metrics.storeErrors.Inc()
			s.log.Error("readiness", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "the store cannot be reached"})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// openAPI serves the OpenAPI document of the server's routes and the
// resource API's, without a token.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(resource.OpenAPI())
}

// memory answers POST /v1/memory: the body is one line of memtool exec.
func (s *Server) memory(w http.ResponseWriter, r *http.Request) {
	rec := w.(*recorder)
	body, err := readBody(w, r, s.cfg.MaxBody)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", s.cfg.MaxBody))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the body failed")
		return
	}
	line := bytes.TrimSpace(body)
	if len(line) == 0 {
		writeError(w, http.StatusBadRequest, "empty body: send one tool input object, or an array of them")
		return
	}
	m, ok := s.memoryOf(w, r)
	if !ok {
		return
	}
	rec.command = commandOf(line)
	runner := turn.Runner{Mem: m, Timeout: s.cfg.CallTimeout, Workers: 4 * runtime.GOMAXPROCS(0)}
	// From the request's start, not from now: the body's arrival was
	// spent from the write deadline too. One call runs within its own
	// timeout (the runner's): a deadline a second or more after that one
	// would change nothing, and costs a timer.
	ctx := r.Context()
	if deadline := rec.start.Add(turnBudget(s.cfg.WriteTimeout)); line[0] == '[' || time.Now().Add(s.cfg.CallTimeout+time.Second).After(deadline) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	answer := runner.Line(ctx, line)
	rec.outcome = "ok"
	if bytes.Contains(answer, []byte(`"is_error":true`)) {
		rec.outcome = "tool_error"
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(answer)
	w.Write(newline)
}

var newline = []byte{'\n'}

// turnBudget is how long after its request's headers a turn may run when
// the server must have written its answer within writeTimeout of them
// (or after a shutdown begins, within Config.ShutdownTimeout): a quarter of it, at most 10 s, is left
// for the writing. A turn of many slow calls, run a few at a time, could
// outlast the write deadline, and the connection would close with no
// answer after some of its changes were made; cut off instead, it answers
// every call, those it did not reach as cancelled.
func turnBudget(writeTimeout time.Duration) time.Duration {
	return writeTimeout - min(writeTimeout/4, 10*time.Second)
}

// preallocMax is the largest body readBody allocates before it arrives.
const preallocMax = 1 << 20

// readBody reads r's body, at most limit bytes (more is an
// *http.MaxBytesError), in one buffer of the size the request declares.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	// A body of a declared length is read into one buffer of that length,
	// but only up to preallocMax: past it the buffer grows as the bytes
	// come, so a client that declares 64 MiB and sends little holds
	// little.
	if n := r.ContentLength; n > 0 && n <= min(limit, preallocMax) {
		buf := make([]byte, n)
		// HTTP frames the body by its Content-Length: nothing follows.
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// memoryOf is Memory for the server's own routes: the memory r is served
// with, or false once it has answered 503 because it cannot be opened.
func (s *Server) memoryOf(w http.ResponseWriter, r *http.Request) (*memtool.Memory, bool) {
	m, _, err := s.Memory(r)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the memory cannot be opened")
		return nil, false
	}
	return m, true
}
