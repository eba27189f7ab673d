package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/memtool/memtool"
)

// tenantMemory is one tenant's memory, as a writer and as a reader sees it.
type tenantMemory struct {
	id       string
	ready    chan struct{}
	err      error
	store    memtool.Store // what Config.Open gave
	rw, read *memtool.Memory
	refs     int // requests using it; guarded by Server.mu
}

// requestState is what an authenticated request carries in its context:
// its principal, and the tenant memories it uses, released when it ends.
type requestState struct {
	p    Principal
	mu   sync.Mutex
	held []*tenantMemory
}

// Memory returns the memory that r is served with: its principal's
// tenant's, read-only unless the key may write, and whether it may. A
// handler of Config.Mount calls it with its request, and may use the
// memory until it returns: the server keeps it open until then. The
// server logs and counts an error, which is only the store's failure to
// open, or the end of r's context (not counted: the client left).
func (s *Server) Memory(r *http.Request) (mem *memtool.Memory, canWrite bool, err error) {
	st, ok := r.Context().Value(principalKey{}).(*requestState)
	if !ok {
		return nil, false, errors.New("server: the request was not authenticated by this server")
	}
	t, err := s.acquire(r.Context(), st.p.Tenant)
	if err != nil && r.Context().Err() != nil {
		return nil, false, err // the client left: no failure of the store
	}
	if err != nil {
		s.metrics.storeErrors.Inc()
		s.log.Error("opening a tenant's memory", "tenant", st.p.Tenant, "err", err)
		return nil, false, err
	}
	st.mu.Lock()
	st.held = append(st.held, t)
	st.mu.Unlock()
	if st.p.Scope < Write {
		return t.read, false, nil
	}
	return t.rw, true, nil
}

// releaseAll ends the request's use of the memories it took.
func (s *Server) releaseAll(st *requestState) {
	st.mu.Lock()
	held := st.held
	st.held = nil
	st.mu.Unlock()
	for _, t := range held {
		s.release(t)
	}
}

// acquire returns the memory of tenant id, opening it on first use, and
// counts one more user of it; release ends that use.
func (s *Server) acquire(ctx context.Context, id string) (*tenantMemory, error) {
	now := time.Now()
	s.mu.Lock()
	t, ok := s.tenants.Get(id, now)
	if !ok {
		t = &tenantMemory{id: id, ready: make(chan struct{}), refs: 1}
		s.tenants.Add(id, t, now)
		evicted := s.evictTenants(now)
		s.mu.Unlock()
		s.closeTenants(evicted)
		s.open(ctx, t)
		if t.err != nil {
			return nil, t.err
		}
		return t, nil
	}
	t.refs++
	s.mu.Unlock()
	select {
	case <-t.ready:
		if t.err != nil {
			s.release(t)
			return nil, t.err
		}
		return t, nil
	case <-ctx.Done():
		s.release(t)
		return nil, ctx.Err()
	}
}

// open opens the memory of t, which acquire just added, and readies t,
// opened or failed, even if Config.Open panics (net/http recovers the
// panic of the request): else the other requests of the tenant would
// wait for t for ever.
func (s *Server) open(ctx context.Context, t *tenantMemory) {
	returned := false
	defer func() {
		if !returned {
			s.openFailed(t, errors.New("server: Config.Open panicked"))
		}
		close(t.ready)
	}()
	// Other requests wait for this open: it does not end with the
	// request that started it, only at the deadline of a call.
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout)
	defer cancel()
	store, err := s.cfg.Open(octx, t.id)
	returned = true
	if err != nil {
		s.openFailed(t, err)
		return
	}
	opts := s.cfg.Memory
	opts.Logger = slog.New(countingHandler{s.log.Handler(), &s.metrics.storeErrors}).With("tenant", t.id)
	t.store = store
	t.rw = memtool.New(store, &opts)
	t.read = memtool.New(newReadOnly(store), &opts)
}

// openFailed records why t did not open, ends its opener's use of it and
// drops it from the cache: the next request tries again.
func (s *Server) openFailed(t *tenantMemory, err error) {
	s.mu.Lock() // a waiter that leaves reads err in release
	defer s.mu.Unlock()
	t.err = err
	t.refs--
	s.tenants.Remove(t.id, func(v *tenantMemory) bool { return v == t })
}

// release ends one use of t. The last use of a memory over the cache's
// bounds closes it.
func (s *Server) release(t *tenantMemory) {
	now := time.Now()
	s.mu.Lock()
	t.refs--
	if t.err != nil {
		s.mu.Unlock()
		return
	}
	s.tenants.Touch(t.id, now)
	evicted := s.evictTenants(now)
	s.mu.Unlock()
	s.closeTenants(evicted)
}

// evictTenants drops the memories over the cache's bounds that no request
// uses and that opened. s.mu is held.
func (s *Server) evictTenants(now time.Time) []*tenantMemory {
	return s.tenants.Evict(now, func(t *tenantMemory) bool {
		if t.refs > 0 {
			return false
		}
		select {
		case <-t.ready:
			return true
		default:
			return false
		}
	})
}

// sweepTenants drops the memories left idle, every quarter of
// Config.TenantIdle, until ctx ends: without it a memory would be dropped
// only when a request comes or ends, and one left idle on a quiet server
// would stay open.
func (s *Server) sweepTenants(ctx context.Context) {
	tick := time.NewTicker(max(s.cfg.TenantIdle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			s.mu.Lock()
			evicted := s.evictTenants(now)
			s.mu.Unlock()
			s.closeTenants(evicted)
		}
	}
}

// closeTenants hands memories the cache dropped to Config.Release.
func (s *Server) closeTenants(ts []*tenantMemory) {
	for _, t := range ts {
		if t.err != nil || s.cfg.Release == nil {
			continue
		}
		if err := s.cfg.Release(t.id, t.store); err != nil {
			s.metrics.storeErrors.Inc()
			s.log.Error("releasing a tenant's memory", "tenant", t.id, "err", err)
		}
	}
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	if p.Scope < Admin {
		writeError(w, http.StatusForbidden, "listing tenants takes an admin key")
		return
	}
	if s.cfg.Tenants == nil {
		writeError(w, http.StatusNotImplemented, "this store cannot list its tenants")
		return
	}
	ids, err := s.cfg.Tenants(r.Context())
	if err != nil {
		s.metrics.storeErrors.Inc()
		s.log.Error("listing tenants", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the tenants cannot be listed")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]string{"tenants": append([]string{}, ids...)})
}
