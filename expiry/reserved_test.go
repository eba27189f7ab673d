package expiry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
)

// The index records uses of the model's files only: the files other
// policies keep under the reserved ".memtool" names (history's versions,
// its counter, its trash) are never collected, and recording them would
// rewrite the index at every version saved and grow it for nothing.
func TestIndexRecordsNoReservedNames(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	mem := memtool.New(history.New(expiry.New(inner, nil), nil), nil)
	for _, in := range []map[string]any{
		{"command": "create", "path": "/memories/d/a", "file_text": "one\n"},
		{"command": "str_replace", "path": "/memories/d/a", "old_str": "one", "new_str": "two"},
		{"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"},
		{"command": "delete", "path": "/memories/e"},
		{"command": "create", "path": "/memories/b", "file_text": "x\n"},
	} {
		b, _ := json.Marshal(in)
		if r := mem.Run(ctx, b); r.IsError {
			t.Fatalf("%s: %s", b, r.Text)
		}
	}
	data, err := inner.ReadFile(ctx, expiry.IndexName, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var ix struct {
		Access map[string]int64 `json:"access"`
	}
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Access["b"]; !ok {
		t.Errorf("the index does not record b: %v", ix.Access)
	}
	for name := range ix.Access {
		if strings.HasPrefix(name, ".memtool") {
			t.Errorf("the index records %s", name)
		}
	}
}
