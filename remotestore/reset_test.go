package remotestore_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
)

// TestResetAfterSending: a change the server made whose connection is
// then closed without an answer, on a new connection or on one that
// served a read before it, fails with ErrOutcomeUnknown, and is not sent
// again (made twice).
func TestResetAfterSending(t *testing.T) {
	for _, reused := range []bool{false, true} {
		for _, c := range changes {
			t.Run(fmt.Sprintf("%s/reused=%v", c.name, reused), func(t *testing.T) {
				inner, api := withFile(t, "old")
				inner.Mkdir(t.Context(), "d")
				var sent atomic.Int32
				s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet {
						api.ServeHTTP(w, r)
						return
					}
					sent.Add(1)
					api.ServeHTTP(httptest.NewRecorder(), r) // made
					conn, _, err := w.(http.Hijacker).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					conn.Close()
				}), nil)
				if reused {
					s.Stat(t.Context(), "")
				}
				if err := c.do(t.Context(), s); !errors.Is(err, memtool.ErrOutcomeUnknown) {
					t.Errorf("%s = %v; want ErrOutcomeUnknown", c.name, err)
				}
				if n := sent.Load(); n != 1 {
					t.Errorf("the change was sent %d times", n)
				}
			})
		}
	}
}
