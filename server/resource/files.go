package resource

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/memtool/memtool"
)

// An Entry is a file or directory as the API shows it.
type Entry struct {
	// Path is the virtual path (/memories/…) in a stat or a listing of
	// files; Name the base name in a directory's entries.
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
	// Type is "file", "dir" or "irregular" (neither, which memtool does
	// not open).
	Type string `json:"type,omitempty"`
	Size int64  `json:"size"`
	// SHA256 is the hex SHA-256 of a file's content, in a listing of files
	// and the answer of a write; the file's ETag is it, quoted.
	SHA256 string `json:"sha256,omitempty"`
}

// A Listing is one directory's entries, sorted by name.
type Listing struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
}

// A Rename is the body of POST /v1/rename.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Written is the answer to a PUT: the file written, with its size and
// SHA-256 (which its ETag header quotes) unless the handler's
// Options.WritesMayChange says the store may have kept other bytes.
type Written struct {
	Path   string `json:"path"`
	Type   string `json:"type"`
	Size   *int64 `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// ETag returns the strong entity tag of a file's content: its hex
// SHA-256, quoted.
func ETag(data []byte) string { return `"` + hash(data) + `"` }

// PathHeader is the header of a file's content (GET /v1/file) that names
// its virtual path, path-escaped, so that a client can tell another
// file's content (a cache that keys on the route, not the query), whose
// ETag is right for its bytes, from the file it asked for.
const PathHeader = "X-Memtool-Path"

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func typeName(fi memtool.FileInfo) string {
	switch {
	case fi.IsRegular():
		return "file"
	case fi.IsDir():
		return "dir"
	}
	return "irregular"
}

// readFile serves GET /v1/file: the raw bytes, with the ETag.
func (h *Handler) readFile(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	q, name, err := named(r)
	if err != nil {
		return err
	}
	limit, err := q.count("limit", h.opts.MaxFileBytes, h.opts.MaxFileBytes)
	if err != nil {
		return err
	}
	search, err := q.flag("search")
	if err != nil {
		return err
	}
	ctx := r.Context()
	if search {
		ctx = memtool.WithSearchRead(ctx) // a search's read is no use of the file
	}
	data, err := s.ReadFile(ctx, name, limit)
	if err != nil {
		return at(name, err)
	}
	etag := ETag(data)
	w.Header().Set("ETag", etag)
	w.Header().Set(PathHeader, url.PathEscape(memtool.VirtualPath(name)))
	if tags, ok := r.Header["If-None-Match"]; ok && matches(tags, etag, true) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
	return nil
}

// writeFile serves PUT /v1/file: the body becomes the file's content.
// If-None-Match: * creates it only if nothing is at the path; If-Match
// replaces it only if its ETag is one of those given (or, for *, if it is a
// file); without either it is replaced or created. A precondition that
// does not hold is 412, and nothing changes. A body that is coded
// (Content-Encoding) or a part of the file (Content-Range) is refused,
// and so is a path that ends in '/' (below the root, which is is_dir).
func (h *Handler) writeFile(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	name, dir, err := q.path("path")
	if err != nil {
		return err
	}
	if dir && name != "" {
		// Refused as the model's create refuses it, rather than written
		// at the name without the slash.
		p := q.get("path")
		return &memtool.PathError{Path: p, Reason: "Cannot write " + p + ": a file path must not end with '/'"}
	}
	ifMatch, hasMatch := r.Header["If-Match"]
	ifNone, hasNone := r.Header["If-None-Match"]
	switch {
	case hasMatch && hasNone:
		return badRequest("give If-Match or If-None-Match, not both")
	case hasNone && (len(ifNone) != 1 || strings.TrimSpace(ifNone[0]) != "*"):
		return badRequest("a write takes only If-None-Match: *")
	case coded(r.Header.Values("Content-Encoding")):
		// Not decoded here: the coded bytes would become the file.
		return badRequest("a write takes the file's bytes as they are, without Content-Encoding")
	case len(r.Header.Values("Content-Range")) > 0:
		// A part would become the whole file (RFC 9110, 14.5).
		return badRequest("a write takes the whole file, without Content-Range")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxFileBytes))
	var tooBig *http.MaxBytesError
	if err != nil && !errors.As(err, &tooBig) {
		// The client's doing (it hung up, or sent less than it said):
		// nothing was written, and nothing went wrong here.
		return badRequest("reading the body failed; nothing was written")
	}
	if err != nil {
		return err
	}
	if name == "" {
		// The root is a directory, whatever a store says of the name "":
		// no precondition holds there, and nothing is written.
		if hasNone || hasMatch {
			return errPrecondition
		}
		return at(name, memtool.ErrIsDir)
	}
	ctx := r.Context()
	status := http.StatusOK
	switch {
	case hasNone:
		err = s.WriteFile(ctx, name, body, memtool.CreateOnly)
		if errors.Is(err, memtool.ErrExist) {
			return errPrecondition
		}
		status = http.StatusCreated
	case hasMatch:
		err = s.Update(ctx, name, h.opts.MaxFileBytes, func(old []byte) ([]byte, error) {
			if !matches(ifMatch, ETag(old), false) {
				return nil, errPrecondition
			}
			return body, nil
		})
		if errors.Is(err, memtool.ErrNotExist) || errors.Is(err, memtool.ErrIsDir) || errors.Is(err, memtool.ErrIrregular) {
			return errPrecondition // nothing that could match is there
		}
	default:
		err = s.WriteFile(ctx, name, body, memtool.Replace)
	}
	if err != nil {
		return at(name, err)
	}
	e := Written{Path: memtool.VirtualPath(name), Type: "file"}
	if !h.opts.WritesMayChange {
		w.Header().Set("ETag", ETag(body))
		size := int64(len(body))
		e.Size, e.SHA256 = &size, hash(body)
	}
	writeJSON(w, status, e)
	return nil
}

// coded reports whether Content-Encoding values name a coding other
// than identity.
func coded(values []string) bool {
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// matches reports whether an If-Match or If-None-Match header's values
// name etag, or are *. The comparison is strong unless weak (RFC 9110,
// 8.8.3.2): If-Match's, where a weak tag never matches; If-None-Match
// compares weakly, so a tag marked weak (W/, as a proxy that compresses
// an answer marks it) matches too.
func matches(values []string, etag string, weak bool) bool {
	for _, v := range values {
		for tag := range strings.SplitSeq(v, ",") {
			tag = strings.TrimSpace(tag)
			if weak && strings.HasPrefix(tag, `W/"`) {
				tag = tag[len("W/"):]
			}
			if tag == "*" || tag == etag {
				return true
			}
		}
	}
	return false
}

// stat serves GET /v1/entry.
func (h *Handler) stat(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	_, name, err := named(r)
	if err != nil {
		return err
	}
	fi, err := s.Stat(r.Context(), name)
	if err != nil {
		return at(name, err)
	}
	writeJSON(w, http.StatusOK, Entry{Path: memtool.VirtualPath(name), Type: typeName(fi), Size: fi.Size})
	return nil
}

// remove serves DELETE /v1/entry: a file or an empty directory, or with
// recursive=true a directory and everything in it. A path that ends in
// '/' names a directory: a file there is not_dir, as the model's delete
// refuses it.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	name, dir, err := q.path("path")
	if err != nil {
		return err
	}
	recursive, err := q.flag("recursive")
	if err != nil {
		return err
	}
	if name == "" {
		return badRequest("%s itself cannot be removed", memtool.Root)
	}
	if dir {
		if err := isDir(r.Context(), s, name); err != nil {
			return err
		}
	}
	if recursive {
		err = memtool.RemoveAll(r.Context(), s, name)
	} else {
		err = s.Remove(r.Context(), name)
	}
	if err != nil {
		return at(name, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readDir serves GET /v1/dir: one directory's entries, sorted by name,
// those the API serves (servable).
func (h *Handler) readDir(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	_, name, err := named(r)
	if err != nil {
		return err
	}
	infos, err := s.ReadDir(r.Context(), name)
	if err != nil {
		return at(name, err)
	}
	out := Listing{Path: memtool.VirtualPath(name), Entries: make([]Entry, 0, len(infos))}
	for _, fi := range infos {
		if _, ok := servable(name, fi.Name); ok {
			out.Entries = append(out.Entries, Entry{Name: fi.Name, Type: typeName(fi), Size: fi.Size})
		}
	}
	slices.SortFunc(out.Entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
	return nil
}

// mkdir serves POST /v1/dir: a new directory, whose parent must exist,
// or with parents=true the missing directories of the path too (then one
// that exists already is no error).
func (h *Handler) mkdir(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	name, parents, err := namedFlag(r, "parents")
	if err != nil {
		return err
	}
	if parents {
		_, err = memtool.MkdirAll(r.Context(), s, name)
	} else {
		err = s.Mkdir(r.Context(), name)
	}
	if err != nil {
		return at(name, err)
	}
	writeJSON(w, http.StatusCreated, Entry{Path: memtool.VirtualPath(name), Type: "dir"})
	return nil
}

// rename serves POST /v1/rename: moves a file or directory to a path
// where nothing is, whose parent exists. It never replaces anything. A
// path that ends in '/' (from or to) names a directory: a file to move is
// then not_dir, as the model's rename refuses it.
func (h *Handler) rename(w http.ResponseWriter, r *http.Request, s memtool.Store) error {
	in := http.MaxBytesReader(w, r.Body, maxJSONBody)
	body, ok := decodeRename(in)
	if !ok {
		// Over the limit, the reader fails again: 413 (see errorFor).
		var tooBig *http.MaxBytesError
		if _, err := io.Copy(io.Discard, in); errors.As(err, &tooBig) {
			return err
		}
		return badRequest(`the body must be {"from": path, "to": path}`)
	}
	oldName, oldDir, err := memtool.CleanPath(body.From)
	if err != nil {
		return err
	}
	newName, newDir, err := memtool.CleanPath(body.To)
	if err != nil {
		return err
	}
	if oldName == "" || newName == "" {
		return badRequest("%s itself cannot be renamed, nor be renamed onto", memtool.Root)
	}
	if oldDir || newDir {
		if err := isDir(r.Context(), s, oldName); err != nil {
			return err
		}
	}
	err = memtool.Move(r.Context(), s, oldName, newName, h.opts.MaxFileBytes)
	if errors.Is(err, fs.ErrInvalid) {
		return badRequest("a directory cannot move into itself")
	}
	if errors.Is(err, memtool.ErrExist) {
		return at(newName, err)
	}
	if errors.Is(err, memtool.ErrNotExist) || errors.Is(err, memtool.ErrNotDir) {
		// What is missing, or not a directory, is on the way to the
		// new path when the one to move is there and that path's
		// directory is not (else something in the tree moved went
		// meanwhile, as a copy found). When the one to move is not
		// there, that is the answer, whichever path the store's
		// rename looked at first.
		_, serr := s.Stat(r.Context(), oldName)
		switch dir := path.Dir(newName); {
		case errors.Is(serr, memtool.ErrNotExist) || errors.Is(serr, memtool.ErrNotDir):
			return at(oldName, serr)
		case serr == nil && dir != "." && isDir(r.Context(), s, dir) != nil:
			return at(dir, err)
		}
	}
	if err != nil {
		return at(oldName, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// decodeRename reads a rename's body: one JSON object whose members are
// from and to, strings, each once and spelt so. encoding/json would take
// the last of a key given twice and match a key in any case, and so
// move what another reader of the same body would not.
func decodeRename(r io.Reader) (body Rename, ok bool) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return Rename{}, false
	}
	want := map[string]*string{"from": &body.From, "to": &body.To}
	for dec.More() {
		t, err := dec.Token()
		key, _ := t.(string)
		dst, known := want[key]
		if err != nil || !known {
			return Rename{}, false
		}
		delete(want, key)
		t, err = dec.Token()
		if *dst, ok = t.(string); err != nil || !ok {
			return Rename{}, false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') || len(want) != 0 {
		return Rename{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return Rename{}, false // something after the object
	}
	return body, true
}
