package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/memtool/memtool"
)

// tenantMemory is one tenant's memory, as a writer and as a reader sees it.
type tenantMemory struct {
	ready    chan struct{}
	err      error
	rw, read *memtool.Memory
}

// Memory returns the memory that r is served with: its principal's
// tenant's, read-only unless the key may write, and whether it may. A
// handler of Config.Mount calls it with its request; the server logs and
// counts an error, which is only the store's failure to open.
func (s *Server) Memory(r *http.Request) (mem *memtool.Memory, canWrite bool, err error) {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		return nil, false, errors.New("server: the request was not authenticated by this server")
	}
	t, err := s.tenant(r.Context(), p.Tenant)
	if err != nil {
		s.metrics.storeErrors.Inc()
		s.log.Error("opening a tenant's memory", "tenant", p.Tenant, "err", err)
		return nil, false, err
	}
	if p.Scope < Write {
		return t.read, false, nil
	}
	return t.rw, true, nil
}

// tenant returns the memory of tenant id, opening it on first use.
func (s *Server) tenant(ctx context.Context, id string) (*tenantMemory, error) {
	s.mu.Lock()
	t := s.tenants[id]
	if t == nil {
		t = &tenantMemory{ready: make(chan struct{})}
		s.tenants[id] = t
		s.mu.Unlock()
		store, err := s.cfg.Open(ctx, id)
		if err != nil {
			t.err = err
			s.mu.Lock()
			delete(s.tenants, id) // tried again by the next request
			s.mu.Unlock()
		} else {
			opts := s.cfg.Memory
			opts.Logger = slog.New(countingHandler{s.log.Handler(), s.metrics.storeErrors}).With("tenant", id)
			t.rw = memtool.New(store, &opts)
			t.read = memtool.New(newReadOnly(store), &opts)
		}
		close(t.ready)
	} else {
		s.mu.Unlock()
	}
	select {
	case <-t.ready:
		return t, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
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
