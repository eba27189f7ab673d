package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/memtool/memtool"
)

// An Error is the answer of a request that failed: an HTTP status and a
// JSON body {"error": {"code": …, "message": …}}. The code is stable and
// names what failed (the table below); the message is for people and
// never holds a host path, a store URL or a token. A Resolver returns one
// to answer with its own status (401, 403, 429, …); the remote store
// decodes one from every failed response, and it unwraps to the memtool
// error its code stands for.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the error the code stands for: a memtool sentinel
// (ErrNotExist for not_found, …), memtool.Refusal with the message for
// refused, a *memtool.PathError for bad_path, context.DeadlineExceeded for
// timeout; nil for a code without one (unauthorized, bad_request, …).
func (e *Error) Unwrap() error {
	switch e.Code {
	case CodeRefused:
		return memtool.Refusal(e.Message)
	case CodeBadPath:
		return &memtool.PathError{Reason: e.Message}
	}
	for _, c := range codes {
		if c.code == e.Code {
			return c.err
		}
	}
	return nil
}

// The codes that are not one of the store's errors.
const (
	// CodeRefused: a policy refused the change; the message is the text
	// for the model (a quota, a secret), passed on verbatim. Status 422.
	CodeRefused = "refused"
	// CodeBadPath: the path gate refused a path; the message says why.
	// Status 400.
	CodeBadPath = "bad_path"
	// CodeBadRequest: a parameter or a body is missing or malformed. Status 400.
	CodeBadRequest = "bad_request"
	// CodePreconditionFailed: If-Match or If-None-Match did not hold;
	// nothing changed. Status 412.
	CodePreconditionFailed = "precondition_failed"
	// CodeForbidden: the caller may only read (the Resolver said so).
	// Status 403; it unwraps to memtool.ErrReadOnly.
	CodeForbidden = "forbidden"
	// CodeInternal: an unexpected failure, logged on the server with its
	// detail. Status 500.
	CodeInternal = "internal"
)

// codes maps each store error to its code and status, in both
// directions: the handler answers with the first row whose error the
// failure wraps, and Error.Unwrap returns the row's error.
var codes = []struct {
	code   string
	status int
	err    error
}{
	// First: a lost answer may come with the context's error, after
	// which timeout would say that nothing changed.
	{"outcome_unknown", http.StatusInternalServerError, memtool.ErrOutcomeUnknown},
	{"not_found", http.StatusNotFound, memtool.ErrNotExist},
	{"exists", http.StatusConflict, memtool.ErrExist},
	{"not_dir", http.StatusConflict, memtool.ErrNotDir},
	{"is_dir", http.StatusConflict, memtool.ErrIsDir},
	{"irregular", http.StatusConflict, memtool.ErrIrregular},
	{"escapes", http.StatusConflict, memtool.ErrEscapes},
	{"not_empty", http.StatusConflict, memtool.ErrNotEmpty},
	{"too_large", http.StatusRequestEntityTooLarge, memtool.ErrTooLarge},
	{"no_space", http.StatusInsufficientStorage, memtool.ErrNoSpace},
	{"read_only", http.StatusForbidden, memtool.ErrReadOnly},
	{CodeForbidden, http.StatusForbidden, memtool.ErrReadOnly},
	{"busy", http.StatusServiceUnavailable, memtool.ErrBusy},
	{"unsupported", http.StatusNotImplemented, errors.ErrUnsupported},
	{"invalid", http.StatusBadRequest, fs.ErrInvalid},
	{"timeout", http.StatusGatewayTimeout, context.DeadlineExceeded},
	{"cancelled", http.StatusServiceUnavailable, context.Canceled},
}

// errorFor turns a failure of the store (or of a request) into the Error
// the client reads. name is the virtual path the failure is about. Only
// refusals and the path gate's reasons pass their own text; any other
// error is named by its code, so that no store detail (a host path, a
// database message) leaves the server. ok is false for an unexpected
// failure, which the caller logs.
func errorFor(err error, path string) (e *Error, ok bool) {
	var re *Error
	var ref memtool.Refusal
	var pe *memtool.PathError
	var tooBig *http.MaxBytesError
	if errors.Is(err, memtool.ErrOutcomeUnknown) && !errors.As(err, &ref) {
		// Before an upstream's answer that the change may have been
		// made behind (a proxy's 502 page, decoded with no code):
		// passed on, it would name no code of the API. A refusal says
		// itself what was left where, as Memory reads it.
		return &Error{http.StatusInternalServerError, "outcome_unknown", memtool.ErrOutcomeUnknown.Error() + ": " + path}, true
	}
	if errors.As(err, &re) && re != err {
		// A store's: the answer of a server upstream (a remote store).
		// Its refusal of this server's own key, or that key's rate
		// limit, is no answer about the caller's key: passed on as it
		// came, the caller would read 401 as if its key were refused,
		// or 429 without Retry-After, or 403 forbidden as if its
		// key might only read.
		switch re.Status {
		case http.StatusTooManyRequests:
			return &Error{http.StatusServiceUnavailable, "busy", memtool.ErrBusy.Error() + ": " + path}, true
		case http.StatusUnauthorized:
			return &Error{http.StatusInternalServerError, CodeInternal, "internal error on " + path}, false
		}
		if re.Code == CodeForbidden {
			// That key may only read: to this server, the store is
			// read-only, whatever the caller's key may do.
			return &Error{http.StatusForbidden, "read_only", memtool.ErrReadOnly.Error() + ": " + path}, true
		}
		if re.Code == "" {
			// Not the API's answer (a proxy's page): none of its codes.
			return &Error{http.StatusInternalServerError, CodeInternal, "internal error on " + path}, false
		}
	}
	switch {
	case errors.As(err, &re):
		return re, true
	case errors.As(err, &ref):
		return &Error{http.StatusUnprocessableEntity, CodeRefused, string(ref)}, true
	case errors.As(err, &pe):
		return &Error{http.StatusBadRequest, CodeBadPath, pe.Reason}, true
	case errors.As(err, &tooBig):
		return &Error{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than the limit of %d bytes", tooBig.Limit)}, true
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return &Error{c.status, c.code, c.err.Error() + ": " + path}, true
		}
	}
	return &Error{http.StatusInternalServerError, CodeInternal, "internal error on " + path}, false
}

func badRequest(format string, args ...any) *Error {
	return &Error{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf(format, args...)}
}

var errPrecondition = &Error{http.StatusPreconditionFailed, CodePreconditionFailed, "the precondition did not hold; nothing changed"}

// writeError writes e as the response; an Error without a valid status
// (a Resolver's, made carelessly) is a 500.
func writeError(w http.ResponseWriter, e *Error) {
	if e.Code == "busy" {
		w.Header().Set("Retry-After", "1")
	}
	status := e.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, struct {
		Error *Error `json:"error"`
	}{e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// DecodeError reads the Error of a failed response's body. A body whose
// "error" is a plain string (the server's own answers, such as a 401) gives
// an Error with code "" and that message; a body that is neither (a
// proxy's page) one with code "" and the status's text.
func DecodeError(status int, body []byte) *Error {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	e := &Error{Status: status, Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}
	if json.Unmarshal(body, &v) != nil || v.Error == nil {
		return e
	}
	var msg string
	if json.Unmarshal(v.Error, &msg) == nil && msg != "" {
		e.Message = fmt.Sprintf("HTTP %d: %s", status, msg)
		return e
	}
	var coded Error
	if json.Unmarshal(v.Error, &coded) == nil && coded.Code != "" {
		coded.Status = status
		return &coded
	}
	return e
}
