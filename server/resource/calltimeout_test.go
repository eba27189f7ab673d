package resource_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
)

// hanging is a store whose Stat waits for its context's end, as a store
// whose server stopped answering does.
type hanging struct{ memtool.Store }

func (hanging) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	<-ctx.Done()
	return memtool.FileInfo{}, ctx.Err()
}

// With CallTimeout, a request on a store that hangs ends then, answered
// as a tool call's deadline is (the store did not answer in time), instead
// of holding the request and the store until the client leaves.
func TestCallTimeout(t *testing.T) {
	srv := serveStore(t, hanging{memstore.New()}, true, &resource.Options{CallTimeout: 50 * time.Millisecond})
	srv.Client().Timeout = time.Minute // a client that waits, but not for ever
	resp := mustDo(t, srv, "GET", "/v1/entry"+p("/memories/a.md"), nil, nil)
	wantError(t, resp, http.StatusGatewayTimeout, "timeout")
}
