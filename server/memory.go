package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"time"

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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
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
	m, _, err := s.Memory(r)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the memory cannot be opened")
		return
	}
	rec.command = commandOf(line)
	runner := turn.Runner{Mem: m, Timeout: s.cfg.CallTimeout, Workers: 4 * runtime.GOMAXPROCS(0)}
	answer := runner.Line(r.Context(), line)
	rec.outcome = "ok"
	if bytes.Contains(answer, []byte(`"is_error":true`)) {
		rec.outcome = "tool_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(answer, '\n'))
}

// commandOf names the command of a line, for metrics: one of the six,
// "turn" for an array, "invalid" otherwise.
func commandOf(line []byte) string {
	if line[0] == '[' {
		return "turn"
	}
	var in struct {
		Command string `json:"command"`
	}
	json.Unmarshal(line, &in)
	switch in.Command {
	case "view", "create", "str_replace", "insert", "delete", "rename":
		return in.Command
	}
	return "invalid"
}
