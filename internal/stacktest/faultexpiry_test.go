package stacktest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/memstore"
)

// A file removed and written again while the access index cannot be
// written has no recorded access, and so counts as used at the next
// Collect; it does not inherit the access of the file removed before
// it. Before, the index kept the removed file's access (only a Collect
// forgot it, or a rename away), and the new file, just written, was
// taken for one unused since then.
func TestRemovedFileAccessForgotten(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []bool{false, true} {
		fault := newFaultStore(memstore.New())
		setup := memtool.New(expiry.New(fault, &expiry.Options{Now: setupClock}), nil)
		mem := memtool.New(expiry.New(fault, &expiry.Options{Now: runClock}), nil)
		run := func(m *memtool.Memory, fields map[string]any) {
			t.Helper()
			in, _ := json.Marshal(fields)
			if res := m.Run(ctx, in); res.IsError {
				t.Fatalf("%v: %s", fields, res.Text)
			}
		}
		target, removed := "/memories/a.md", "/memories/a.md"
		if dir {
			target, removed = "/memories/d/a.md", "/memories/d"
		}
		run(setup, create(target, "old"))
		run(mem, map[string]any{"command": "delete", "path": removed})
		fault.armOn(failBefore, 1, "update", expiry.IndexName)
		run(mem, create(target, "new"))
		if _, hit := fault.disarm(); hit == "" {
			t.Fatal("the create did not update the index")
		}
		data, err := fault.base.ReadFile(ctx, expiry.IndexName, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var ix struct{ Access map[string]int64 }
		if err := json.Unmarshal(data, &ix); err != nil {
			t.Fatal(err)
		}
		name := target[len("/memories/"):]
		if at, ok := ix.Access[name]; ok && at < runClock().Unix() {
			t.Errorf("delete of %s: %s, written again at %v, has the access of the file removed: %v", removed, target, runClock(), at)
		}
	}
}
