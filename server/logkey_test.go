package server_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
)

// A request refused after its key was verified (the key's rate limit, a
// tenant it may not name) is logged with that key's id, as the package
// doc promises of every request: else an operator cannot tell which key
// is being throttled or probing other tenants.
func TestRefusedRequestLogsItsKey(t *testing.T) {
	f := newFixture(t, func(c *server.Config) { c.Rate, c.Burst = 0.001, 1 })
	k, alice := f.key(t, "alice", keys.Write)
	f.do(t, "POST", "/v1/memory", alice, view)
	if r := f.do(t, "POST", "/v1/memory", alice, view); r.status != 429 {
		t.Fatalf("past the burst: %d", r.status)
	}
	log := f.log.waitFor(t, `"status":429`)
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"status":429`) && !strings.Contains(line, `"key":"`+k.ID+`"`) {
			t.Errorf("the 429 is logged without its key: %s", line)
		}
	}
	g := newFixture(t, nil)
	k, alice = g.key(t, "alice", keys.Write)
	if r := g.do(t, "POST", "/v1/memory", alice, view, server.TenantHeader, "bob"); r.status != 403 {
		t.Fatalf("naming another tenant: %d", r.status)
	}
	log = g.log.waitFor(t, `"status":403`)
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"status":403`) && (!strings.Contains(line, `"key":"`+k.ID+`"`) || !strings.Contains(line, `"tenant":"alice"`)) {
			t.Errorf("the 403 is logged without its key and the key's tenant: %s", line)
		}
	}
}
