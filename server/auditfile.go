package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/server/resource"
)

// AuditFile is the resource API's audit source (resource.Options.Audit)
// for an audit log that the audit policy appends to the file at path: a
// request reads the entries of the tenant its Principal acts on (the
// key's own, or the one an admin key names), never another tenant's. It
// serves only requests that this server authenticated.
func AuditFile(path string) resource.AuditSource {
	return func(r *http.Request) (io.ReadCloser, audit.Filter, error) {
		p, ok := PrincipalFrom(r.Context())
		if !ok {
			return nil, audit.Filter{}, errors.New("audit log: the request was not authenticated by this server")
		}
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing written yet: the policy creates the file on first use.
			return io.NopCloser(strings.NewReader("")), audit.Filter{Tenant: p.Tenant}, nil
		}
		if err != nil {
			return nil, audit.Filter{}, fmt.Errorf("audit log: %w", err)
		}
		return f, audit.Filter{Tenant: p.Tenant}, nil
	}
}
