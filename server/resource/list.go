package resource

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/memtool/memtool"
)

// A Page is one page of GET /v1/files: files in byte order of their
// paths, and the cursor of the next page ("" on the last).
type Page struct {
	Data     []Entry `json:"data"`
	NextPage string  `json:"next_page,omitempty"`
}

// listFiles serves GET /v1/files: the regular files below the directory
// prefix (default the root), at any depth, each with its size and SHA-256,
// in byte order of their paths, limit per page. The Store keeps no
// modification time, so there is none. page is the next_page of the
// previous answer: the listing goes on after the last path it gave, so a
// change between pages neither repeats nor skips a file that stays.
func (h *Handler) listFiles(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	dir := ""
	if _, ok := q["prefix"]; ok {
		if dir, _, err = q.path("prefix"); err != nil {
			return err
		}
	}
	limit, err := q.count("limit", defaultPageSize, int64(h.opts.MaxPageSize))
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = defaultPageSize
	}
	after := ""
	if c := q.get("page"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			return badRequest("parameter page is not a cursor this API gave")
		}
		after = string(b)
	}
	ctx := r.Context()
	var found []Entry
	if err := collect(ctx, s, dir, true, after, int(limit)+1, &found); err != nil {
		return at(dir, err)
	}
	page := Page{Data: make([]Entry, 0, len(found))}
	if len(found) > int(limit) {
		found = found[:limit]
		page.NextPage = base64.RawURLEncoding.EncodeToString([]byte(found[limit-1].Path))
	}
	// A listing is no use of the files it hashes, as a search is not:
	// the expiry policy would keep every file of a memory that a sync
	// client lists from ever expiring.
	hashCtx := memtool.WithSearchRead(ctx)
	for _, e := range found {
		// Hashed now, from the content itself, so size and hash agree.
		data, err := s.ReadFile(hashCtx, e.Path, h.opts.MaxFileBytes)
		switch {
		case errors.Is(err, memtool.ErrTooLarge) || unopened(err):
			// Listed with its size, without a hash: a file that does
			// not open is passed over as Search passes over it, not
			// made a failure that would hide every other file.
		case errors.Is(err, memtool.ErrNotExist) || errors.Is(err, memtool.ErrIsDir) || errors.Is(err, memtool.ErrIrregular):
			continue // gone, or no longer a file, since it was listed
		case err != nil:
			return at(e.Path, err)
		default:
			e.Size, e.SHA256 = int64(len(data)), hash(data)
		}
		e.Path = memtool.VirtualPath(e.Path)
		page.Data = append(page.Data, e)
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// unopened reports whether err, the failure of a read of one file, says
// that this file does not open while the store works (as memtool's
// Search reads it): a policy refused it with a reason (a Refusal), as an
// encrypted memory refuses a file under a key it does not hold. A busy
// store is not about one file.
func unopened(err error) bool {
	var ref memtool.Refusal
	return errors.As(err, &ref) && !errors.Is(err, memtool.ErrBusy)
}

// servable returns the clean name of the entry called name in the
// directory dir, and whether the API serves it: it is one element of a
// path, and the path gate takes it. A store may list the names that the
// storage layer keeps for itself (.memtool…, as a policy's data or record
// in an SQLite or PostgreSQL store): a listing that gave them would name a
// path that every other route refuses, and a file there is not the
// memory's (the encryption policy cannot open it).
func servable(dir, name string) (string, bool) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return "", false
	}
	full := path.Join(dir, name)
	_, _, err := memtool.CleanPath(memtool.VirtualPath(full))
	return full, err == nil
}

// collect appends to out the regular files below dir whose names sort
// after after, in byte order of their names, until out holds max. It
// visits a directory's entries in the order of their names, a directory's
// as name+"/", which is the byte order of the names below them, and skips
// a subtree whose names all sort before after, and the entries the API
// does not serve (servable). A directory that vanishes while listed is
// skipped, unless it is the one asked for (top).
func collect(ctx context.Context, s memtool.Store, dir string, top bool, after string, max int, out *[]Entry) error {
	infos, err := s.ReadDir(ctx, dir)
	if err != nil {
		if !top && (errors.Is(err, memtool.ErrNotExist) || errors.Is(err, memtool.ErrNotDir)) {
			return nil
		}
		return err
	}
	key := func(fi memtool.FileInfo) string {
		if fi.IsDir() {
			return fi.Name + "/"
		}
		return fi.Name
	}
	slices.SortFunc(infos, func(a, b memtool.FileInfo) int { return strings.Compare(key(a), key(b)) })
	for _, fi := range infos {
		if len(*out) >= max {
			return nil
		}
		name, ok := servable(dir, fi.Name)
		switch {
		case !ok:
		case fi.IsRegular():
			if name > after {
				*out = append(*out, Entry{Path: name, Type: "file", Size: fi.Size})
			}
		case fi.IsDir():
			if prefix := name + "/"; prefix > after || strings.HasPrefix(after, prefix) {
				if err := collect(ctx, s, name, false, after, max, out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
