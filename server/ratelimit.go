package server

import (
	"time"

	"golang.org/x/time/rate"
)

// allow takes one request from the key's budget, or says how long to
// wait for one.
func (s *Server) allow(keyID string) (time.Duration, bool) {
	if s.cfg.Rate < 0 {
		return 0, true
	}
	s.mu.Lock()
	l := s.limits[keyID]
	if l == nil {
		if len(s.limits) >= 100000 {
			clear(s.limits)
		}
		l = rate.NewLimiter(rate.Limit(s.cfg.Rate), s.cfg.Burst)
		s.limits[keyID] = l
	}
	s.mu.Unlock()
	now := time.Now()
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return max(d, time.Second), false
	}
	return 0, true
}
