package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
)

// A failure limit so slow that the wait for the next attempt is longer
// than a time.Duration can hold is answered with that wait (its largest
// value), not with a Retry-After of one second that the conversion's
// overflow used to give.
func TestAuthFailuresRetryAfterDoesNotOverflow(t *testing.T) {
	f := newFixture(t, func(c *server.Config) { c.FailRate, c.FailBurst = 1e-10, 1 })
	bad := "mt_0123456789abcdef_" + strings.Repeat("ab", 32)
	if r := f.do(t, "POST", "/v1/memory", bad, view); r.status != 401 {
		t.Fatalf("first failure: %d, want 401", r.status)
	}
	r := f.do(t, "POST", "/v1/memory", bad, view)
	secs, err := strconv.ParseInt(r.header.Get("Retry-After"), 10, 64)
	if r.status != 429 || err != nil || secs < 1e9 {
		t.Errorf("past the burst: %d, Retry-After %q, want 429 and a wait of more than 1e9 s", r.status, r.header.Get("Retry-After"))
	}
}

// The same for a key's own rate limit.
func TestKeyRetryAfterDoesNotOverflow(t *testing.T) {
	f := newFixture(t, func(c *server.Config) { c.Rate, c.Burst = 1e-10, 1 })
	_, alice := f.key(t, "alice", keys.Write)
	if r := f.do(t, "POST", "/v1/memory", alice, view); r.status != 200 {
		t.Fatalf("first request: %d, want 200", r.status)
	}
	r := f.do(t, "POST", "/v1/memory", alice, view)
	secs, err := strconv.ParseInt(r.header.Get("Retry-After"), 10, 64)
	if r.status != 429 || err != nil || secs < 1e9 {
		t.Errorf("past the burst: %d, Retry-After %q, want 429 and a wait of more than 1e9 s", r.status, r.header.Get("Retry-After"))
	}
}
