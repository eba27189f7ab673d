package server

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"time"

	"golang.org/x/time/rate"

	"github.com/memtool/memtool/internal/lru"
)

// maxLimiters bounds the rate limiters kept, of keys and of client
// addresses each: past it, the least recently used is dropped.
const maxLimiters = 100000

// limiterIdle is how long a limiter stays unused before it is dropped: at
// least until it has refilled, so that dropping it forgives nothing.
func limiterIdle(r float64, burst int) time.Duration {
	idle := 10 * time.Minute
	if r > 0 {
		idle = max(idle, seconds(float64(burst)/r))
	}
	return idle
}

// seconds is the duration of s seconds (s ≥ 0), the longest duration if
// s is longer: a conversion past it would overflow into a negative or
// tiny duration, and a very slow limit would wait for nothing.
func seconds(s float64) time.Duration {
	if d := s * float64(time.Second); d < math.MaxInt64 {
		return time.Duration(d)
	}
	return math.MaxInt64
}

// limiter returns the limiter of id in c, made on first use.
func (s *Server) limiter(c *lru.Cache[*rate.Limiter], id string, r float64, burst int, now time.Time) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := c.Get(id, now)
	if !ok {
		l = rate.NewLimiter(rate.Limit(r), burst)
		c.Add(id, l, now)
		c.Evict(now, func(*rate.Limiter) bool { return true })
	}
	return l
}

// allow takes one request from the key's budget, or says how long to
// wait for one.
func (s *Server) allow(keyID string) (time.Duration, bool) {
	if s.cfg.Rate < 0 {
		return 0, true
	}
	now := time.Now()
	return take(s.limiter(s.limits, keyID, s.cfg.Rate, s.cfg.Burst, now), now)
}

// take takes one event from l's budget, or says how long to wait for one.
func take(l *rate.Limiter, now time.Time) (time.Duration, bool) {
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return max(d, time.Second), false
	}
	return 0, true
}

// failuresAllowed says whether r's client address may still have a token
// checked, or how long it waits: its failed authentications are within
// Config.FailRate and FailBurst.
func (s *Server) failuresAllowed(r *http.Request) (time.Duration, bool) {
	if s.cfg.FailRate < 0 {
		return 0, true
	}
	now := time.Now()
	l := s.limiter(s.failures, clientAddress(r), s.cfg.FailRate, s.cfg.FailBurst, now)
	if tokens := l.TokensAt(now); tokens < 1 {
		return max(seconds((1-tokens)/s.cfg.FailRate), time.Second), false
	}
	return 0, true
}

// authFailed counts a failed authentication against r's client address.
// Tokens checked at once all pass failuresAllowed before any fails, so
// a failure past the budget is not dropped but owed: the address waits
// for it too, and makes no more than FailBurst and FailRate over time.
func (s *Server) authFailed(r *http.Request) {
	if s.cfg.FailRate < 0 {
		return
	}
	now := time.Now()
	s.limiter(s.failures, clientAddress(r), s.cfg.FailRate, s.cfg.FailBurst, now).ReserveN(now, 1)
}

// clientAddress is the client r came from (the connection's peer: behind
// a proxy, the proxy's): an IPv4 address whole, an IPv6 address by its
// /64, since a host or a link is given a /64 whole and could otherwise
// take a fresh budget from each of its addresses.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}
