package server_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// A client that hangs up is no failure of the store: a request whose
// client left while its key was read from the key store, or while it
// waited for its tenant's memory to open, is not counted in
// memtool_store_errors_total nor logged as an error, which an operator
// alerts on.
func TestClientGoneIsNoStoreError(t *testing.T) {
	opening, ready := make(chan struct{}), make(chan struct{})
	f := newFixture(t, func(c *server.Config) {
		c.Open = func(ctx context.Context, tenant string) (memtool.Store, error) {
			if tenant == "alice" {
				close(opening)
				<-ready
			}
			return memstore.New(), nil
		}
	})
	_, admin := f.key(t, "ops", keys.Admin)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	post := func(ctx context.Context, token string, header ...string) int {
		req := httptest.NewRequestWithContext(ctx, "POST", "/v1/memory", strings.NewReader(view))
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		f.server.ServeHTTP(w, req)
		return w.Code
	}

	// Its key not yet read: the key store is asked with the request's
	// context, which has ended.
	post(gone, admin)
	// Its key read (by a request for another tenant), it waits for alice's
	// memory, which another request is opening.
	if code := post(context.Background(), admin, server.TenantHeader, "bob"); code != 200 {
		t.Fatalf("admin on bob: %d", code)
	}
	done := make(chan int)
	go func() { done <- post(context.Background(), admin, server.TenantHeader, "alice") }()
	<-opening
	post(gone, admin, server.TenantHeader, "alice")
	close(ready)
	if code := <-done; code != 200 {
		t.Fatalf("the request that opened alice's memory: %d", code)
	}

	if n := one(t, scrape(t, f), "memtool_store_errors_total"); n != 0 {
		t.Errorf("memtool_store_errors_total = %v after clients hung up, want 0; log:\n%s", n, f.log.String())
	}
	if log := f.log.String(); strings.Contains(log, `"level":"ERROR"`) {
		t.Errorf("clients hanging up were logged as errors:\n%s", log)
	}
	// Nor are their requests counted as server errors, on which an
	// operator alerts too: their outcome is "cancelled".
	fams := scrape(t, f)
	for _, m := range fams["memtool_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" && l.GetValue() == "server_error" {
				t.Errorf("a request counted as a server error after clients hung up: %v", m)
			}
		}
	}
	if n := one(t, fams, "memtool_http_requests_total", "route", "/v1/memory", "outcome", "cancelled"); n != 2 {
		t.Errorf("requests of clients that hung up counted cancelled: %v, want 2", n)
	}
}
