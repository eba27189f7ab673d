package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/memtool/memtool"
)

// searchAnswer is the body of a GET /v1/search answer.
type searchAnswer struct {
	Matches []searchMatch `json:"matches"`
	Total   int           `json:"total"`
	// The files the search passed over because they do not open (see
	// memtool.SearchResult.Unreadable): their number, and the first
	// memtool.MaxUnreadablePaths of their paths.
	Unreadable      int      `json:"unreadable"`
	UnreadablePaths []string `json:"unreadable_paths"`
}

type searchMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// search answers GET /v1/search?q=QUERY[&regex=true][&case_sensitive=true][&path=/memories/…][&limit=N]
// with the matching lines of the principal's tenant, as memtool.Memory.Search
// finds them. A query or path that Search refuses is a 400 whose error
// is the refusal's reason; a store failure is a 503 without its detail.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	// Parsed strictly: r.URL.Query drops a pair it cannot decode, and Get
	// takes the first of a parameter given twice, so a path could be
	// left out and the whole memory searched.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, "malformed query string")
		return
	}
	for k, v := range q {
		if len(v) > 1 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("parameter %s is given %d times", k, len(v)))
			return
		}
	}
	query := memtool.SearchQuery{Query: q.Get("q"), Path: q.Get("path")}
	if query.Regex, err = boolParam(q.Get("regex")); err != nil {
		writeError(w, http.StatusBadRequest, "regex: "+err.Error())
		return
	}
	if query.CaseSensitive, err = boolParam(q.Get("case_sensitive")); err != nil {
		writeError(w, http.StatusBadRequest, "case_sensitive: "+err.Error())
		return
	}
	if v := q.Get("limit"); v != "" {
		if query.Limit, err = strconv.Atoi(v); err != nil {
			writeError(w, http.StatusBadRequest, "limit: want an integer")
			return
		}
	}
	mem, ok := s.memoryOf(w, r)
	if !ok {
		return
	}
	// A search is one call: it has the deadline of one.
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.CallTimeout)
	defer cancel()
	res, err := mem.Search(ctx, query)
	var refused *memtool.SearchError
	switch {
	case errors.As(err, &refused):
		writeError(w, http.StatusBadRequest, refused.Reason)
		return
	case err != nil && ctx.Err() != nil && r.Context().Err() == nil:
		writeError(w, http.StatusServiceUnavailable, "the search did not finish in time")
		return
	case err != nil && r.Context().Err() != nil: // the client left, or the server is stopping
		writeError(w, http.StatusServiceUnavailable, "the search was cancelled")
		return
	case err != nil:
		s.metrics.storeErrors.Inc()
		s.log.Error("search", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the search failed")
		return
	}
	out := searchAnswer{
		Matches:         make([]searchMatch, len(res.Matches)),
		Total:           res.Total,
		Unreadable:      res.Unreadable,
		UnreadablePaths: res.UnreadablePaths,
	}
	if out.UnreadablePaths == nil {
		out.UnreadablePaths = []string{}
	}
	for i, m := range res.Matches {
		out.Matches[i] = searchMatch{m.Path, m.Line, m.Text}
	}
	writeJSON(w, http.StatusOK, out)
}

// boolParam reads a query parameter that is absent, "true" or "false".
func boolParam(v string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, errors.New(`want "true" or "false"`)
}
