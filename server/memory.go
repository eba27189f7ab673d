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
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(answer)
	w.Write(newline)
}

var newline = []byte{'\n'}

// readBody reads r's body, at most limit bytes (more is an
// *http.MaxBytesError), in one buffer of the size the request declares.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		buf := make([]byte, n)
		// HTTP frames the body by its Content-Length: nothing follows.
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// commandOf names the command of a line, for metrics: one of the six,
// "turn" for an array, "invalid" otherwise. It reads what
// json.Unmarshal would put in a field "command" (keys matched without
// case, the last one winning), without decoding the rest of the line.
func commandOf(line []byte) string {
	if line[0] == '[' {
		return "turn"
	}
	command, ok := scanCommand(line)
	if !ok { // escapes: leave them to the decoder
		var in struct {
			Command string `json:"command"`
		}
		json.Unmarshal(line, &in)
		command = []byte(in.Command)
	}
	switch string(command) {
	case "view":
		return "view"
	case "create":
		return "create"
	case "str_replace":
		return "str_replace"
	case "insert":
		return "insert"
	case "delete":
		return "delete"
	case "rename":
		return "rename"
	}
	return "invalid"
}

// scanCommand returns the value of the last member "command" (any case)
// of the JSON object line, if it is a string; nothing if line is not a
// valid JSON object. ok is false if a key or that value has an escape.
func scanCommand(line []byte) (command []byte, ok bool) {
	if !json.Valid(line) {
		return nil, true
	}
	i := skipSpace(line, 0)
	if line[i] != '{' {
		return nil, true
	}
	i++
	for {
		i = skipSpace(line, i)
		if line[i] == '}' {
			return command, true
		}
		key, end, escaped := jsonString(line, i)
		if escaped {
			return nil, false
		}
		i = skipSpace(line, end)
		i = skipSpace(line, i+1) // the colon
		if bytes.EqualFold(key, []byte("command")) && line[i] == '"' {
			val, end, escaped := jsonString(line, i)
			if escaped {
				return nil, false
			}
			command, i = val, end
		} else {
			i = skipValue(line, i)
		}
		i = skipSpace(line, i)
		if line[i] == '}' {
			return command, true
		}
		i++ // the comma
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonString reads the valid JSON string at b[i]: its raw content, the
// index after it, and whether it holds an escape.
func jsonString(b []byte, i int) (s []byte, end int, escaped bool) {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return b[i+1 : j], j + 1, escaped
		}
	}
}

// skipValue returns the index after the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for {
		switch b[i] {
		case '"':
			_, i, _ = jsonString(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
}
