package remotestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/wait"
	"github.com/memtool/memtool/server/resource"
)

// TokenEnv is the environment variable storeurl reads the bearer token
// from, for a store URL http://… or https://….
const TokenEnv = "MEMTOOL_TOKEN"

// Options tune a Store. The zero value (or nil) gives the defaults.
type Options struct {
	// Token is the bearer token sent with every request. It is never
	// logged, and never part of an error.
	Token string
	// Timeout bounds each request, from sending it to reading its whole
	// answer. Default DefaultTimeout.
	Timeout time.Duration
	// Client sends the requests; default a client of its own, which keeps
	// up to 64 idle connections to the server. Its Timeout, if set,
	// applies too; its CheckRedirect does not: a redirect is never
	// followed.
	Client *http.Client
	// MaxUpdateTries is how many times Update reads, edits and writes
	// before it gives up on a file that others keep changing, with
	// ErrBusy. Default DefaultMaxUpdateTries.
	MaxUpdateTries int
}

// Defaults of Options.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxUpdateTries = 100
)

// Store is a memtool.Store kept by a memtool server, reached over its
// resource API. It has Renamer and RemoveAller, done by the server in
// one step each. Safe for concurrent use.
type Store struct {
	base   *url.URL // the server's URL, its path the prefix of /v1/…
	token  string
	tenant string // named in X-Memtool-Tenant, if not ""
	client *http.Client
	opts   Options
}

// Open returns the store of the memtool server at rawURL (http://host:port
// or https://host[/prefix]), without a request: storeurl checks it with a
// Stat. The token must come from the caller (storeurl reads TokenEnv).
// A plain http:// URL is refused for a host other than a loopback
// address, so that the token never crosses a network in the clear.
func Open(rawURL string, opts *Options) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote store: malformed URL")
	}
	// Never the user, password or query of the URL, which could hold a secret.
	shown := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("remote store %q: the URL must be https://host[:port][/prefix]", shown)
	case u.Host == "":
		return nil, fmt.Errorf("remote store %q: the URL names no host", shown)
	case u.User != nil:
		return nil, fmt.Errorf("remote store %q: put the token in $%s, not in the URL", shown, TokenEnv)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("remote store %q: the URL takes no query or fragment", shown)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, fmt.Errorf("remote store %q: plain http is only for a server on this machine (localhost); use https", shown)
	}
	// Concurrent calls (one turn's tool calls run in parallel) each keep
	// a connection: the default of 2 idle connections per host would close
	// and reopen them.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: transport}
	s := &Store{base: u}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Client != nil {
		c := *s.opts.Client
		client = &c
	}
	// A redirect is an answer, never followed: Go's client would send
	// the token and the tenant on to another port or a subdomain (and
	// X-Memtool-Tenant anywhere), and a 307 or 308 the change itself.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s.client = client
	if s.opts.Timeout <= 0 {
		s.opts.Timeout = DefaultTimeout
	}
	if s.opts.MaxUpdateTries <= 0 {
		s.opts.MaxUpdateTries = DefaultMaxUpdateTries
	}
	s.token = s.opts.Token
	s.opts.Token = ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	return s, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Close releases the client's idle connections.
func (s *Store) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

// Stat returns the entry at name.
func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	_, _, data, err := s.do(ctx, call{op: "stat", name: name, method: "GET", route: "/v1/entry", query: pathQuery(name), want: http.StatusOK})
	if err != nil {
		return memtool.FileInfo{}, err
	}
	var e resource.Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return memtool.FileInfo{}, pathError("stat", name, fmt.Errorf("malformed answer: %v", err))
	}
	if e.Path != memtool.VirtualPath(name) {
		return memtool.FileInfo{}, pathError("stat", name, foreign(e.Path))
	}
	fi, err := info(e)
	if err != nil {
		return memtool.FileInfo{}, pathError("stat", name, err)
	}
	fi.Name = baseName(name)
	return fi, nil
}

// foreign is the error of an answer about path, not the one asked for
// (a cache that keys on the route alone, another service's JSON).
func foreign(path string) error {
	return fmt.Errorf("the answer is about %q, not the path asked for: not the API's answer", path)
}

func baseName(name string) string { return name[strings.LastIndex(name, "/")+1:] }

// info is the FileInfo of an entry of the API.
func info(e resource.Entry) (memtool.FileInfo, error) {
	fi := memtool.FileInfo{Name: e.Name, Size: e.Size}
	switch e.Type {
	case "file":
	case "dir":
		fi.Type = fs.ModeDir
	case "irregular":
		fi.Type = fs.ModeIrregular
	default:
		return fi, fmt.Errorf("malformed answer: entry type %q", e.Type)
	}
	if e.Size < 0 {
		return fi, fmt.Errorf("malformed answer: entry size %d", e.Size)
	}
	return fi, nil
}

// ReadFile returns the content of the file at name; the server refuses a
// file larger than limit without sending it.
func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	data, _, err := s.read(ctx, "read", name, limit)
	return data, err
}

// read returns a file's content and its ETag. The ETag is the content's
// SHA-256, so an answer whose body does not have it is not the file: one
// cut short where the transport cannot tell (a connection closed by a
// proxy, no length given), or a page that is not the API's. An Update
// that took it for the file would write its edit of it over the file.
// A weak form of the tag (W/"…", which a proxy that compresses may make
// of it) is the same hash.
func (s *Store) read(ctx context.Context, op, name string, limit int64) ([]byte, string, error) {
	limit = max(limit, 0)
	q := pathQuery(name, "limit", strconv.FormatInt(limit, 10))
	if memtool.IsSearchRead(ctx) {
		q.Set("search", "true") // not a use of the file, for the server's policies
	}
	_, h, data, err := s.do(ctx, call{op: op, name: name, method: "GET", route: "/v1/file", query: q, want: http.StatusOK, maxBody: limit + 1})
	if err != nil {
		return nil, "", err
	}
	if p, ok := h[http.CanonicalHeaderKey(resource.PathHeader)]; ok && !namesPath(p, name) {
		// Another file's content, right for its ETag (a server from
		// before the header names no path).
		return nil, "", pathError(op, name, errors.New("the answer is another file's content, not the path asked for: not the API's answer"))
	}
	if int64(len(data)) > limit {
		return nil, "", pathError(op, name, memtool.ErrTooLarge)
	}
	etag := resource.ETag(data)
	if strings.TrimPrefix(h.Get("ETag"), "W/") != etag {
		return nil, "", pathError(op, name, errors.New("the answer is not the file's whole content (its ETag is not the content's SHA-256): cut short, or not the API's answer"))
	}
	return data, etag, nil
}

// namesPath reports whether the values of an answer's X-Memtool-Path name
// the file name: one value, which unescapes to its virtual path, however
// it was escaped (a gateway may escape it otherwise than the server).
func namesPath(values []string, name string) bool {
	if len(values) != 1 {
		return false
	}
	p, err := url.PathUnescape(values[0])
	return err == nil && p == memtool.VirtualPath(name)
}

// ReadDir returns the entries of the directory at name, without a name
// the path gate refuses (as the server leaves them out).
func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	_, _, data, err := s.do(ctx, call{op: "readdir", name: name, method: "GET", route: "/v1/dir", query: pathQuery(name), want: http.StatusOK, list: true})
	if err != nil {
		return nil, err
	}
	var l resource.Listing
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, pathError("readdir", name, fmt.Errorf("malformed answer: %v", err))
	}
	if l.Path != memtool.VirtualPath(name) {
		return nil, pathError("readdir", name, foreign(l.Path))
	}
	out := make([]memtool.FileInfo, 0, len(l.Entries))
	seen := make(map[resource.Entry]bool, len(l.Entries))
	for _, e := range l.Entries {
		fi, err := info(e)
		if err == nil && (e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00")) {
			// Not one element of a path: joined to name it would be
			// name itself, its parent or a name elsewhere, and a walk
			// of the tree would leave it or never end.
			err = fmt.Errorf("malformed answer: entry name %q", e.Name)
		}
		// A directory holds one entry of a name and type (a file and a
		// directory of one name are two, as an object store may hold
		// them): one listed twice would be walked twice, shown twice.
		key := resource.Entry{Name: e.Name, Type: e.Type}
		if err == nil && seen[key] {
			err = fmt.Errorf("malformed answer: entry name %q listed twice", e.Name)
		}
		seen[key] = true
		if err != nil {
			return nil, pathError("readdir", name, err)
		}
		if reachable(path.Join(name, e.Name)) != nil {
			// A name the path gate refuses (a line break, a bidi
			// control, a name the storage layer keeps), which the
			// server leaves out: every request about it is refused,
			// and the model's view would show it raw.
			continue
		}
		out = append(out, fi)
	}
	return out, nil
}

// WriteFile writes data as the file at name: CreateOnly with
// If-None-Match: *, which the server turns into one atomic create.
func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	c := call{op: "write", name: name, method: "PUT", route: "/v1/file", query: pathQuery(name), body: data, header: http.Header{}, want: http.StatusOK}
	if mode == memtool.CreateOnly {
		c.header.Set("If-None-Match", "*")
		c.want = http.StatusCreated
	}
	status, _, answer, err := s.do(ctx, c)
	if status == http.StatusPreconditionFailed {
		return s.wrap(c, memtool.ErrExist)
	}
	if err != nil {
		return err
	}
	return s.written(c, answer)
}

// written checks that the answer of a PUT is the API's, the entry of the
// file it wrote: a success that is not is no sign the write was made,
// nor that it was not (the API's answer, cut short).
func (s *Store) written(c call, answer []byte) error {
	var e resource.Written
	if err := json.Unmarshal(answer, &e); err != nil || e.Path != memtool.VirtualPath(c.name) || e.Type != "file" {
		return s.wrap(c, fmt.Errorf("%w: the server's answer is not the API's entry of the file written (cut short, or a proxy's page?)", memtool.ErrOutcomeUnknown))
	}
	if e.SHA256 != "" && `"`+e.SHA256+`"` != resource.ETag(c.body) {
		// Written, but not as sent: something on the way (a proxy
		// that rewrites bodies) changed the bytes.
		return s.wrap(c, fmt.Errorf("%w: the server wrote other bytes than those sent (its SHA-256 of them differs): something between changed them", memtool.ErrOutcomeUnknown))
	}
	return nil
}

// Update reads the file with its ETag, applies fn and writes the result
// with If-Match: the write lands only if nobody changed the file in
// between, else Update reads again and retries, up to MaxUpdateTries
// times (then ErrBusy). fn may so be called more than once.
func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	for try := 0; try < s.opts.MaxUpdateTries; try++ {
		old, etag, err := s.read(ctx, "update", name, limit)
		if err != nil {
			return err
		}
		data, err := fn(old)
		if err != nil {
			return err
		}
		c := call{op: "update", name: name, method: "PUT", route: "/v1/file", query: pathQuery(name), body: data, header: http.Header{"If-Match": {etag}}, want: http.StatusOK}
		status, _, answer, err := s.do(ctx, c)
		switch {
		case status == http.StatusPreconditionFailed:
		case err != nil:
			return err
		default:
			return s.written(c, answer)
		}
		// Changed (or removed) since read: read it again.
		if err := backoff(ctx, try); err != nil {
			return s.wrap(c, err)
		}
	}
	return pathError("update", name, memtool.ErrBusy)
}

// backoff waits a little longer after each failed try, up to 50 ms.
func backoff(ctx context.Context, try int) error {
	return wait.Sleep(ctx, time.Duration(min(try, 50))*time.Millisecond)
}

// Mkdir creates the directory name.
func (s *Store) Mkdir(ctx context.Context, name string) error {
	_, _, _, err := s.do(ctx, call{op: "mkdir", name: name, method: "POST", route: "/v1/dir", query: pathQuery(name), want: http.StatusCreated})
	return err
}

// Remove removes the file or empty directory at name.
func (s *Store) Remove(ctx context.Context, name string) error {
	_, _, _, err := s.do(ctx, call{op: "remove", name: name, method: "DELETE", route: "/v1/entry", query: pathQuery(name), want: http.StatusNoContent})
	return err
}

// RemoveAll removes name and everything below it, in one request.
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	_, _, _, err := s.do(ctx, call{op: "removeall", name: name, method: "DELETE", route: "/v1/entry", query: pathQuery(name, "recursive", "true"), want: http.StatusNoContent})
	return err
}

// Rename moves oldname to newname, never replacing anything, in one request.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if err := reachable(newname); err != nil {
		return pathError("rename", newname, err)
	}
	body, _ := json.Marshal(resource.Rename{From: memtool.VirtualPath(oldname), To: memtool.VirtualPath(newname)})
	_, _, _, err := s.do(ctx, call{op: "rename", name: oldname, method: "POST", route: "/v1/rename", body: body, header: http.Header{"Content-Type": {"application/json"}}, want: http.StatusNoContent})
	return err
}
