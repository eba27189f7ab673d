package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
)

// A handler that panics (net/http ends the answer and closes the
// connection) is logged and counted as a server error, not as the 200
// the answer had not yet written: an operator reading the access log or
// the metrics sees that something broke.
func TestPanicLoggedAsServerError(t *testing.T) {
	f := newFixture(t, func(c *server.Config) {
		c.Mount["/v1/boom"] = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	})
	_, alice := f.key(t, "alice", keys.Write)
	req, err := http.NewRequest("GET", f.url+"/v1/boom", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+alice)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("a panicking handler answered HTTP %d, want the connection ended", resp.StatusCode)
	}
	log := f.log.waitFor(t, `"route":"/v1/boom"`)
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"route":"/v1/boom"`) && !strings.Contains(line, `"status":500`) {
			t.Errorf("the panic is logged as: %s", line)
		}
	}
	metrics := f.do(t, "GET", "/metrics", "", "").body
	if !strings.Contains(metrics, `route="/v1/boom"`) || strings.Contains(metrics, `outcome="ok",route="/v1/boom"`) {
		t.Errorf("the panic is counted as:\n%s", grepLines(metrics, "/v1/boom"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
