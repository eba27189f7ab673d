package resource

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/memtool/memtool"
)

// params are a request's query parameters, each given at most once.
type params url.Values

func query(r *http.Request) (params, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query string")
	}
	for k, v := range q {
		if len(v) > 1 {
			return nil, badRequest("parameter %s is given %d times", k, len(v))
		}
	}
	return params(q), nil
}

func (q params) get(key string) string { return url.Values(q).Get(key) }

// path returns the clean name of the virtual path in parameter key, which
// must be given; dir reports a trailing slash.
func (q params) path(key string) (name string, dir bool, err error) {
	p, ok := q[key]
	if !ok {
		return "", false, badRequest("parameter %s is missing", key)
	}
	return memtool.CleanPath(p[0])
}

// named returns a request's parameters and the clean name in its
// parameter path. A trailing slash is not refused: the store answers for
// what is at the name (ErrIsDir where a file was needed).
func named(r *http.Request) (params, string, error) {
	q, err := query(r)
	if err != nil {
		return nil, "", err
	}
	name, _, err := q.path("path")
	return q, name, err
}

// namedFlag returns the clean name in a request's parameter path and its
// boolean parameter key (false if absent), for the routes that take one
// flag besides the path.
func namedFlag(r *http.Request, key string) (name string, on bool, err error) {
	q, name, err := named(r)
	if err != nil {
		return "", false, err
	}
	on, err = q.flag(key)
	return name, on, err
}

// flag reads a boolean parameter, false if absent.
func (q params) flag(key string) (bool, error) {
	v, ok := q[key]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, badRequest("parameter %s must be true or false", key)
	}
	return b, nil
}

// count reads a positive integer parameter no larger than max; def if absent.
func (q params) count(key string, def, max int64) (int64, error) {
	v, ok := q[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("parameter %s must be a whole number of at least 0", key)
	}
	return min(n, max), nil
}
