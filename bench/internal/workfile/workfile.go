// Package workfile reads the workload files of bench gen (mixed.jsonl,
// read-only.jsonl) for the load generators that replay them.
package workfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Read returns the tool inputs of a workload file, in order.
func Read(name string) ([]map[string]any, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for line := range bytes.Lines(b) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l struct {
			Input map[string]any `json:"input"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		out = append(out, l.Input)
	}
	return out, nil
}

// Under returns the inputs as JSON lines with their paths moved from
// /memories to prefix (such as /memories/p3), so that several clients
// replay one workload side by side.
func Under(inputs []map[string]any, prefix string) [][]byte {
	out := make([][]byte, len(inputs))
	for i, in := range inputs {
		m := make(map[string]any, len(in))
		for k, v := range in {
			if s, ok := v.(string); ok && (k == "path" || k == "old_path" || k == "new_path") {
				v = prefix + strings.TrimPrefix(s, "/memories")
			}
			m[k] = v
		}
		b, err := json.Marshal(m)
		if err != nil {
			panic(err) // decoded from JSON
		}
		out[i] = b
	}
	return out
}
