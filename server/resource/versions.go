package resource

import (
	"context"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
)

// A Version is an earlier content of a file, kept by the history policy.
type Version struct {
	N    int       `json:"n"`    // counts up from 1 per path, never reused
	Time time.Time `json:"time"` // when it was replaced
	Op   string    `json:"op"`   // what replaced it: update, write or delete
	Size int64     `json:"size"`
}

// Versions is the answer of GET /v1/versions, oldest first.
type Versions struct {
	Path     string    `json:"path"`
	Versions []Version `json:"versions"`
}

// belowHistory returns the store the history policy keeps its versions
// in: the store that the history wrapper in s's chain of wrappers wraps,
// once the wrapper has finished the deletes a crash cut off part way
// (history.Store.Settle), whose versions are listed only then. Without
// one (the policy is off) it fails with unsupported.
func belowHistory(ctx context.Context, s memtool.Store) (memtool.Store, error) {
	for {
		if h, ok := s.(*history.Store); ok {
			h.Settle(ctx)
			return h.Unwrap(), nil
		}
		w, ok := s.(memtool.Wrapper)
		if !ok {
			return nil, &Error{http.StatusNotImplemented, "unsupported", "this memory keeps no versions (the history policy is off)"}
		}
		s = w.Unwrap()
	}
}

// versionArgs reads the path and, if want, the version number n of a
// versions route, and finds the versions' store.
func versionArgs(r *http.Request, s memtool.Store, wantN bool) (name, virtual string, n int, inner memtool.Store, err error) {
	q, name, err := named(r)
	if err != nil {
		return "", "", 0, nil, err
	}
	if name == "" {
		// The root is a directory: history keeps files' versions only,
		// and would fail with an error of its own, an internal one here.
		return "", "", 0, nil, at(name, memtool.ErrIsDir)
	}
	if wantN {
		// Not bounded lower than int: count would take a larger number
		// for the bound, and so name another version.
		v, err := q.count("n", -1, math.MaxInt)
		if err != nil || v < 1 {
			return "", "", 0, nil, badRequest("parameter n must be a version number (1 or more)")
		}
		n = int(v)
	}
	inner, err = belowHistory(r.Context(), s)
	return name, memtool.VirtualPath(name), n, inner, err
}

// noVersion maps history's missing version to not_found.
func noVersion(name string, err error) error {
	if errors.Is(err, history.ErrNoVersion) {
		return at(name, memtool.ErrNotExist)
	}
	return at(name, err)
}

// listVersions serves GET /v1/versions: a file's kept versions.
func (h *Handler) listVersions(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	name, p, _, inner, err := versionArgs(r, s, false)
	if err != nil {
		return err
	}
	vs, err := history.Versions(r.Context(), inner, p)
	if err != nil {
		return at(name, err)
	}
	out := Versions{Path: p, Versions: make([]Version, 0, len(vs))}
	for _, v := range vs {
		out.Versions = append(out.Versions, Version{N: v.N, Time: v.Time, Op: v.Op, Size: v.Size})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// readVersion serves GET /v1/version: the raw bytes of version n.
func (h *Handler) readVersion(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	name, p, n, inner, err := versionArgs(r, s, true)
	if err != nil {
		return err
	}
	data, err := history.ReadLimit(r.Context(), inner, p, n, h.opts.MaxFileBytes)
	if err != nil {
		return noVersion(name, err)
	}
	w.Header().Set("ETag", ETag(data))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(data)
	return nil
}

// revert serves POST /v1/revert: version n becomes the file's content,
// written through the whole store (its policies apply, and history keeps
// the content it replaces, so a revert is undone the same way). A deleted
// file is created again, with its parent directories.
func (h *Handler) revert(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	name, p, n, inner, err := versionArgs(r, s, true)
	if err != nil {
		return err
	}
	if err := history.Revert(r.Context(), s, inner, p, n); err != nil {
		return noVersion(name, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
