package resource_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// lostAnswer is a store whose writes are made and then answered with
// err, an error wrapping memtool.ErrOutcomeUnknown: what pgstore answers
// when the connection is lost during the commit, which it may have made.
type lostAnswer struct {
	memtool.Store
	err error
}

func (s lostAnswer) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.Store.WriteFile(ctx, name, data, mode); err != nil {
		return err
	}
	return s.err
}

// TestOutcomeUnknownIsSaid: a change whose store lost its answer is
// answered with a code of its own, which the remote store turns back into
// memtool.ErrOutcomeUnknown, so that the model is told to look before it
// tries again; not internal, after which a client takes it for a change
// not made, nor timeout, after which the model reads that nothing
// changed and makes the change twice.
func TestOutcomeUnknownIsSaid(t *testing.T) {
	for _, lost := range []error{
		fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, errors.New("read tcp: connection reset by peer")),
		fmt.Errorf("%w: %w", memtool.ErrOutcomeUnknown, context.DeadlineExceeded),
	} {
		inner := memstore.New()
		srv := serveStore(t, lostAnswer{inner, lost}, true, nil)
		resp := put(t, srv, "/memories/f.md", "one", nil)
		e := wantError(t, resp, http.StatusInternalServerError, "outcome_unknown")
		if !errors.Is(e, memtool.ErrOutcomeUnknown) {
			t.Errorf("%v: the answer's error does not unwrap to ErrOutcomeUnknown", lost)
		}

		remote, err := remotestore.Open(srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer remote.Close()
		if err := remote.WriteFile(t.Context(), "g.md", []byte("x"), memtool.Replace); !errors.Is(err, memtool.ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%v: through the remote store: %v", lost, err)
		}
		m := memtool.New(remote, nil)
		res := m.Execute(t.Context(), &memtool.Create{Path: "/memories/h.md", FileText: "x"})
		if !res.IsError || !strings.Contains(res.Text, "may or may not have been made") {
			t.Errorf("%v: the model reads %q", lost, res.Text)
		}
		if storetest.ReadText(t, inner, "h.md") != "x" {
			t.Fatal("the write was not made")
		}
	}
	if !strings.Contains(string(resource.OpenAPI()), `"outcome_unknown"`) {
		t.Error("the OpenAPI document does not list the code outcome_unknown")
	}
}
