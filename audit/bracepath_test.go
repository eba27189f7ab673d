package audit_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/storetest"
)

// TestReadPathEndingInBrace: a path that ends with "{" (which the path
// gate allows) puts `{"` inside an entry, where its string closes. Read
// took that for the start of another entry: it skipped the entry as cut
// off and failed on the rest, so a model could make every entry after one
// view of /memories/x{ unreadable to `memtool log`.
func TestReadPathEndingInBrace(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		var log syncbuf.Buffer
		mem := memtool.New(audit.New(inner, &log, &audit.Options{Tenant: "t{"}), nil)
		for _, in := range []map[string]any{
			{"command": "view", "path": "/memories/x{"},
			{"command": "create", "path": "/memories/d{/a{", "file_text": "x"},
			{"command": "rename", "old_path": "/memories/d{/a{", "new_path": "/memories/b{"},
			{"command": "create", "path": "/memories/after.md", "file_text": "y"},
		} {
			storetest.Call(t, mem, in)
		}
		var got []string
		err := audit.Read(strings.NewReader(log.String()), audit.Filter{}, func(e audit.Entry) error {
			got = append(got, e.Op+" "+e.Path+" "+e.NewPath)
			return nil
		})
		if err != nil {
			t.Fatalf("reading the log: %v\n%s", err, log.String())
		}
		want := []string{"read /memories/x{ ", "create /memories/d{/a{ ", "rename /memories/d{/a{ /memories/b{", "create /memories/after.md "}
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("no entry %q in %q", w, got)
			}
		}
	})
}
