package resource

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
)

// An AuditSource gives a request the audit log (package audit) it may
// read and the filter that bounds it: the server opens the log it writes
// and fixes the filter's Tenant to the caller's, so that no key reads
// another tenant's entries. A non-nil error answers the request as a
// Resolver's does (403 for a key that may not read the log, …). The
// handler closes the log.
type AuditSource func(r *http.Request) (log io.ReadCloser, bound audit.Filter, err error)

// Audit-log paging.
const (
	defaultAuditEntries = 1000
	maxAuditEntries     = 10000
)

// AuditPage is the answer of GET /v1/audit: the last entries of the log
// that pass the filters, oldest first.
type AuditPage struct {
	Entries []audit.Entry `json:"entries"`
}

// auditLog serves GET /v1/audit: the last limit entries of the audit log
// that pass the query's filters (op, path, outcome, since, until) and the
// AuditSource's bound. Without Options.Audit it is unsupported.
func (h *Handler) auditLog(w http.ResponseWriter, r *http.Request, _ memtool.Store) error {
	if h.opts.Audit == nil {
		return &Error{http.StatusNotImplemented, "unsupported", "this server does not serve its audit log"}
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	f := audit.Filter{Op: q.get("op"), Outcome: q.get("outcome")}
	if _, ok := q["path"]; ok {
		name, _, err := q.path("path")
		if err != nil {
			return err
		}
		f.Path = memtool.VirtualPath(name)
	}
	for key, t := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := q.get(key); v != "" {
			if *t, err = time.Parse(time.RFC3339, v); err != nil {
				return badRequest("parameter %s must be a time as in 2026-11-30T21:00:00Z", key)
			}
		}
	}
	limit, err := q.count("limit", defaultAuditEntries, maxAuditEntries)
	if err != nil {
		return err
	}
	log, bound, err := h.opts.Audit(r)
	var own *Error
	if errors.As(err, &own) {
		return own // the source's own answer, as a Resolver's
	}
	if err != nil {
		return err
	}
	defer log.Close()
	// The last limit entries, in a ring.
	ring := make([]audit.Entry, 0, limit)
	next := 0
	err = audit.Read(&wholeLines{r: log}, f, func(e audit.Entry) error {
		if !bound.Match(e) {
			return nil
		}
		if len(ring) < int(limit) {
			ring = append(ring, e)
			return nil
		}
		if limit > 0 {
			ring[next] = e
			next = (next + 1) % int(limit)
		}
		return nil
	})
	var re *audit.ReadError
	if errors.As(err, &re) {
		return errors.New("the audit log is damaged: " + re.Error()) // logged, not sent
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AuditPage{Entries: append(ring[next:], ring[:next]...)})
	return nil
}

// wholeLines reads r up to its last newline. The audit policy appends
// each entry as one line, newline last: a log read while it appends may
// end in the start of a line, which is not yet an entry (nor damage), and
// is left out.
type wholeLines struct {
	r       io.Reader
	buf     []byte
	ready   []byte // up to a newline, to be read
	pending []byte // after the last newline so far
	err     error
}

func (w *wholeLines) Read(p []byte) (int, error) {
	for len(w.ready) == 0 {
		if w.err != nil {
			return 0, w.err // at io.EOF, pending is a line not yet written whole
		}
		if w.buf == nil {
			w.buf = make([]byte, 32<<10)
		}
		n, err := w.r.Read(w.buf)
		w.pending = append(w.pending, w.buf[:n]...)
		if i := bytes.LastIndexByte(w.pending, '\n'); i >= 0 {
			w.ready = w.pending[:i+1]
			w.pending = append([]byte(nil), w.pending[i+1:]...)
		} else if len(w.pending) > 1<<20 {
			// Longer than audit.Read takes a line: passed on for it to
			// refuse, not held.
			w.ready, w.pending = w.pending, nil
		}
		w.err = err
	}
	n := copy(p, w.ready)
	w.ready = w.ready[n:]
	return n, nil
}
