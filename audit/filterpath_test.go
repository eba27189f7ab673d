package audit_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// TestFilterPathTrailingSlash: a path filter written as a directory with
// a trailing slash (/memories/notes/, /memories/) selects that directory
// itself too, as the same filter without the slash does: its mkdir and
// its listing are "this path", not something else.
func TestFilterPathTrailingSlash(t *testing.T) {
	var log syncbuf.Buffer
	mem := memtool.New(audit.New(memstore.New(), &log, nil), nil)
	for _, in := range []map[string]any{
		{"command": "create", "path": "/memories/notes/a.md", "file_text": "x"},
		{"command": "view", "path": "/memories/notes/"},
		{"command": "view", "path": "/memories/"},
		{"command": "create", "path": "/memories/notesx.md", "file_text": "y"},
	} {
		storetest.Call(t, mem, in)
	}
	selected := func(path string) []string {
		var out []string
		if err := audit.Read(strings.NewReader(log.String()), audit.Filter{Path: path}, func(e audit.Entry) error {
			out = append(out, e.Op+" "+e.Path)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, dir := range []string{"/memories/notes", "/memories"} {
		without, with := selected(dir), selected(dir+"/")
		if strings.Join(with, ", ") != strings.Join(without, ", ") {
			t.Errorf("filter %s/ selects [%s]; %s selects [%s]", dir, strings.Join(with, ", "), dir, strings.Join(without, ", "))
		}
	}
}
