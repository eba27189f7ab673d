package remotestore

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
)

// call is one request of the API.
type call struct {
	op, name string // for errors: the operation and the Store name
	method   string
	route    string // /v1/…
	query    url.Values
	header   http.Header
	body     []byte
	// want is the status of the API's answer when the call succeeds: any
	// other success (a page of a proxy or of another site, a 304 to a
	// request that named no ETag) is no answer of the API, so an error,
	// never a change reported as made or a page taken for a file.
	want int
	// maxBody, if not 0, is the most bytes read of a success's body: the
	// caller checks the length of what it gets.
	maxBody int64
	// list says the answer is a list (a directory's entries, the
	// tenants), which may be longer than maxAnswer, up to maxListAnswer.
	list bool
}

// maxErrorBody is the most bytes read of a failure's body; the API's
// errors are much shorter.
const maxErrorBody = 1 << 20

// maxAnswer and maxListAnswer are the most bytes of a success's body,
// but a file's content (call.maxBody), that the API sends: an entry (a
// Stat's, a write's), and a list. A longer answer is not the API's, and
// is not read to its end: a hostile or broken server would fill the
// client's memory. Variables for tests.
var (
	maxAnswer     int64 = 1 << 20
	maxListAnswer int64 = 64 << 20
)

// do sends c and returns the answer's status, headers and body for the
// status c.want, or an error: the server's, decoded and wrapped as op
// name: err, an answer that is not the API's, or the transport's.
func (s *Store) do(ctx context.Context, c call) (int, http.Header, []byte, error) {
	if err := reachable(c.name); err != nil {
		if c.method == "GET" {
			err = memtool.ErrNotExist
		}
		return 0, nil, nil, s.wrap(c, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	// Whether any try wrote the request's headers: until then nothing
	// of it can have reached the server (a dial, a proxy's tunnel, a TLS
	// handshake that failed), and a change's error says it was not made.
	var sent atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }})
	u := *s.base
	u.Path += c.route
	u.RawQuery = c.query.Encode()
	req, err := http.NewRequestWithContext(ctx, c.method, u.String(), nil)
	if err != nil {
		return 0, nil, nil, s.wrap(c, err)
	}
	if c.method != http.MethodGet {
		once(req, c.body)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if s.tenant != "" {
		req.Header.Set(tenantHeader, s.tenant)
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, nil, s.wrap(c, err) // not sent
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, nil, s.wrap(c, lostAnswer(ctx, c, err, sent.Load()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		// Not followed (see Open), and not the API's answer: the API
		// never redirects. Something in front may give one after it
		// forwarded a change (nginx's error_page with a URL turns the
		// 502 or 504 it gives then into a 302), so a change it answers
		// may have been made.
		err := fmt.Errorf("the server answered %d %s instead of the API's answer: check the store URL (a proxy's sign-in page?)", resp.StatusCode, http.StatusText(resp.StatusCode))
		if loc, lerr := resp.Location(); lerr == nil {
			where := url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: loc.Path} // not the query, which may hold a secret
			err = fmt.Errorf("the server redirected the request (%d, to %s) instead of answering it: check the store URL (a proxy's sign-in page?)", resp.StatusCode, where.String())
		}
		if c.method != http.MethodGet {
			err = fmt.Errorf("%w: %w", memtool.ErrOutcomeUnknown, err)
		}
		return 0, nil, nil, s.wrap(c, err)
	}
	if resp.StatusCode >= 300 {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if c.method != http.MethodGet && resp.StatusCode >= 500 && (err != nil || !serverFailure(resp.StatusCode, data)) {
			// A proxy's failure (502, 504, …), which it may give after
			// it forwarded the change: it may have been made.
			return 0, nil, nil, s.wrap(c, fmt.Errorf("%w (%w)", memtool.ErrOutcomeUnknown, resource.DecodeError(resp.StatusCode, data)))
		}
		if err != nil {
			return 0, nil, nil, s.wrap(c, transportError(ctx, err))
		}
		return resp.StatusCode, resp.Header, nil, s.wrap(c, refused(resp.StatusCode, resp.Header, resource.DecodeError(resp.StatusCode, data)))
	}
	if resp.StatusCode != c.want {
		err := fmt.Errorf("the server answered %d %s where the API answers %d: not the API's answer: check the store URL (a proxy's page?)", resp.StatusCode, http.StatusText(resp.StatusCode), c.want)
		if c.method != http.MethodGet {
			// A success of something in front, which may have
			// passed the change on.
			err = fmt.Errorf("%w: %w", memtool.ErrOutcomeUnknown, err)
		}
		return 0, nil, nil, s.wrap(c, err)
	}
	var r io.Reader = resp.Body
	bound := maxAnswer
	if c.list {
		bound = maxListAnswer
	}
	switch {
	case c.maxBody > 0:
		r = io.LimitReader(r, c.maxBody)
	case c.maxBody == 0:
		r = io.LimitReader(r, bound+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, nil, nil, s.wrap(c, lostAnswer(ctx, c, err, true))
	}
	if c.maxBody == 0 && int64(len(data)) > bound {
		err := fmt.Errorf("the answer is longer than the API's (more than %d bytes): not the API's answer", bound)
		if c.method != http.MethodGet {
			err = fmt.Errorf("%w: %w", memtool.ErrOutcomeUnknown, err)
		}
		return 0, nil, nil, s.wrap(c, err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// once makes req, a change, one that the transport sends at most once:
// Go's HTTP/2 transport sends a request again after the peer resets its
// stream with PROTOCOL_ERROR, which a server or a proxy may do after it
// took the request whole, and so made the change twice, or answered the
// second try (not_found) as if the first had not been. It does so with a
// request without a body as it is, and with one that has a body by its
// GetBody: here every change has a body, even an empty one, and GetBody
// gives it again only while none of it has been read.
func once(req *http.Request, data []byte) {
	read := new(atomic.Bool)
	req.Body, req.ContentLength = sendOnce{bytes.NewReader(data), read}, int64(len(data))
	req.GetBody = func() (io.ReadCloser, error) {
		if read.Load() {
			return nil, errors.New("not sent again: the server may have made the change")
		}
		return sendOnce{bytes.NewReader(data), read}, nil
	}
}

// sendOnce is the body of a change; read says whether the transport read
// any of it.
type sendOnce struct {
	r    *bytes.Reader
	read *atomic.Bool
}

func (b sendOnce) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.r.Read(p)
}

func (b sendOnce) Close() error { return nil }

// serverFailure reports whether a failure's body is the server's: the
// API's coded error, whose code says what happened, or, for a 503, the
// server's own {"error": "…"}, which it answers before the API (the key
// store cannot be reached). Any other 5xx to a change is a proxy's.
func serverFailure(status int, body []byte) bool {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil {
		return false
	}
	var msg string
	if json.Unmarshal(v.Error, &msg) == nil {
		return status == http.StatusServiceUnavailable && msg != ""
	}
	var e resource.Error
	return json.Unmarshal(v.Error, &e) == nil && e.Code != ""
}

// lostAnswer is the error of c when its answer did not come back whole
// (err): for a change whose request may have reached the server, one that
// wraps memtool.ErrOutcomeUnknown, and not the context's error, since the
// change may have been made (Memory must not tell the model that nothing
// changed); for a read, or a change that never left (sent is false: no
// try wrote its headers; or the server could not be reached), the
// transport's error.
func lostAnswer(ctx context.Context, c call, err error, sent bool) error {
	var op *net.OpError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	if c.method == http.MethodGet || !sent || errors.As(err, &op) && op.Op == "dial" || errors.As(err, &dns) || errors.As(err, &cert) {
		return transportError(ctx, err)
	}
	return fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, err)
}

// transportError is err with the context's own error in its chain when the
// context ended, so errors.Is finds context.Canceled or DeadlineExceeded.
func transportError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

// pathError is err for the operation op on name, which it gives as the
// model's path (the root as /memories, not as an empty name).
func pathError(op, name string, err error) error {
	return &fs.PathError{Op: "remote " + op, Path: memtool.VirtualPath(name), Err: err}
}

func (s *Store) wrap(c call, err error) error {
	return pathError(c.op, c.name, err)
}

// reachable says whether the API reaches name: the server's path gate
// refuses what the model's refuses, among them the names the storage
// layer keeps for itself (.memtool…, a policy's data on the server). Such
// a name is, seen through the API, nothing: a read finds nothing there
// (ErrNotExist) and a write is refused with the gate's reason, without a
// request either way.
func reachable(name string) error {
	_, _, err := memtool.CleanPath(memtool.VirtualPath(name))
	return err
}

func pathQuery(name string, more ...string) url.Values {
	q := url.Values{"path": {memtool.VirtualPath(name)}}
	for i := 0; i+1 < len(more); i += 2 {
		q.Set(more[i], more[i+1])
	}
	return q
}

// refused is the API's error e of status, and for the two answers the
// server gives before it looks at a request, the key's rate limit (429)
// and its credentials (401), also the text the model reads (a
// memtool.Refusal) instead of an internal error: nothing was changed,
// and the model or the user can act on it.
func refused(status int, h http.Header, e *resource.Error) error {
	var text string
	switch status {
	case http.StatusTooManyRequests:
		text = "The memory server is limiting how often this app's key may call it (HTTP 429); nothing was changed. Try again"
		// Only a number of seconds: the header's text is not passed on.
		if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs >= 0 && secs < 1e6 {
			text += fmt.Sprintf(" in %d s", secs)
		}
	case http.StatusUnauthorized:
		text = "The memory server did not accept this app's key (HTTP 401: it may be revoked or expired); nothing was changed. The user must give the app a valid key"
	default:
		return e
	}
	return fmt.Errorf("%w (%w)", memtool.Refusal(text), e)
}
