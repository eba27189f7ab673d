package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool/expiry"
)

// TestExpiryRacesOnSharedBackends races 8 memtool exec processes with
// the expiry policy (alone, and under all policies) on a directory,
// PostgreSQL and S3, each creating, editing, renaming and deleting files
// of its own: every Update of the shared access index must land on the
// one before, so at the end the index parses and holds an access for
// every file there is, and none for a file that was deleted.
func TestExpiryRacesOnSharedBackends(t *testing.T) {
	t.Parallel()
	policies := map[string]string{
		"expiry": `{"expiry":true}`,
		"all":    `{"encrypt":true,"history":{},"expiry":true,"limits":{"max_file_size":65536,"max_files":1000},"secrets":"redact","audit":%q}`,
	}
	raceOnSharedBackends(t, policies, expiryRace)
}

func expiryRace(t *testing.T, url string, env []string) {
	const procs, files = 8, 6
	st := openVia(t, url, env)
	p := newRacePool(t, st.top, url, env, procs)
	defer p.stop()
	lines := make([][]string, procs)
	type sent struct{ op, name, to string }
	cmds := make([][]sent, procs)
	want := map[string]bool{} // name → whether it must be in the index
	for w := range procs {
		for j := range files {
			name := fmt.Sprintf("/memories/e%d/f%d.txt", w, j)
			lines[w] = append(lines[w], jsonLine(createInput(name, "text")))
			cmds[w] = append(cmds[w], sent{"create", name, ""})
			want[name] = true
		}
		for j := range files {
			name := fmt.Sprintf("/memories/e%d/f%d.txt", w, j)
			switch j % 3 {
			case 0:
				lines[w] = append(lines[w], jsonLine(map[string]any{"command": "delete", "path": name}))
				cmds[w] = append(cmds[w], sent{"delete", name, ""})
				want[name] = false
			case 1:
				to := fmt.Sprintf("/memories/e%d/g%d.txt", w, j)
				lines[w] = append(lines[w], jsonLine(renameInput(name, to)))
				cmds[w] = append(cmds[w], sent{"rename", name, to})
				delete(want, name) // the doc promises nothing for the old name
				want[to] = true
			default:
				lines[w] = append(lines[w], jsonLine(map[string]any{"command": "str_replace", "path": name, "old_str": "text", "new_str": "edited"}))
				cmds[w] = append(cmds[w], sent{"edit", name, ""})
			}
		}
	}
	// A busy refusal (a lock not had in time on a loaded machine) changed
	// nothing: what it would have done is not in the index, and a later
	// command on a file whose create it refused finds no file.
	for w, as := range p.ask(lines) {
		missing := map[string]bool{}
		for j, a := range as {
			c := cmds[w][j]
			switch {
			case !a.IsError:
			case busyRefusal(a.Text()) || missing[c.name] && strings.Contains(a.Text(), "does not exist"):
				switch c.op {
				case "create":
					want[c.name], missing[c.name] = false, true
				case "delete":
					want[c.name] = !missing[c.name]
				case "rename":
					want[c.to] = false
				}
			default:
				t.Errorf("process %d, command %d: %s", w, j, a.Text())
			}
		}
	}
	data, err := st.belowExpiry.ReadFile(context.Background(), expiry.IndexName, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Version int              `json:"version"`
		Access  map[string]int64 `json:"access"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatalf("the index does not parse: %v\n%s", err, data)
	}
	for name, in := range want {
		key := strings.TrimPrefix(name, "/memories/")
		if _, ok := idx.Access[key]; ok != in {
			t.Errorf("%s: in the index %v, want %v", key, ok, in)
		}
	}
	t.Logf("index: %d entries", len(idx.Access))
}
