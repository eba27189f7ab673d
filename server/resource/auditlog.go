package resource

import (
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
	if err != nil {
		return err
	}
	defer log.Close()
	// The last limit entries, in a ring.
	ring := make([]audit.Entry, 0, limit)
	next := 0
	err = audit.Read(log, f, func(e audit.Entry) error {
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
