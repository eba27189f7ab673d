package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestLimitsRacesOnSharedBackends races 8 memtool exec processes with
// the limits policy (alone, and under all policies) on a directory,
// PostgreSQL and S3: creating files past max_files, and growing files
// past max_file_size and max_bytes. limits' doc lets a store-wide limit
// be overshot by one operation for each other process writing at the
// same moment, and a file never pass max_file_size.
func TestLimitsRacesOnSharedBackends(t *testing.T) {
	t.Parallel()
	const limits = `"limits":{"max_file_size":1200,"max_files":12,"max_bytes":6000}`
	policies := map[string]string{
		"limits": `{` + limits + `}`,
		"all":    `{"encrypt":true,"history":{},"expiry":true,` + limits + `,"secrets":"redact","audit":%q}`,
	}
	raceOnSharedBackends(t, policies, limitsRace)
}

func limitsRace(t *testing.T, url string, env []string) {
	const procs, maxFiles, maxBytes, maxFileSize, line = 8, 12, 6000, 1200, 100
	st := openVia(t, url, env)
	p := newRacePool(t, st.top, url, env, procs)
	defer p.stop()
	// Files: each process creates 4 of its own, then all insert lines of
	// 100 bytes into the first 4 files until refused.
	lines := make([][]string, procs)
	for w := range procs {
		for j := range 4 {
			lines[w] = append(lines[w], jsonLine(createInput(fmt.Sprintf("/memories/f%d.%d.txt", w, j), "x")))
		}
	}
	p.ask(lines)
	files, bytes := storeUsage(t, p)
	if files > maxFiles+procs-1 {
		t.Errorf("after racing creates: %d files, over max_files %d by more than one for each other process (%d)", files, maxFiles, procs-1)
	}
	t.Logf("after the creates: %d files, %d bytes", files, bytes)
	names := storeNames(t, p.store, "")
	for w := range procs {
		lines[w] = nil
		for j := range 12 {
			name := "/memories/" + names[(w+j)%len(names)]
			lines[w] = append(lines[w], jsonLine(map[string]any{"command": "insert", "path": name, "insert_line": 0, "insert_text": strings.Repeat(fmt.Sprint(w%10), line-1) + "\n"}))
		}
	}
	p.ask(lines)
	files, bytes = storeUsage(t, p)
	t.Logf("after the inserts: %d files, %d bytes", files, bytes)
	if bytes > maxBytes+(procs-1)*line {
		t.Errorf("after racing inserts: %d bytes, over max_bytes %d by more than one insert for each other process (%d)", bytes, maxBytes, (procs-1)*line)
	}
}

// storeUsage counts the files and bytes of the store as the model sees it,
// and checks that none is larger than max_file_size.
func storeUsage(t *testing.T, p *racePool) (files, bytes int) {
	t.Helper()
	walkStore(t, p.store, "", func(name string, data []byte) {
		files++
		bytes += len(data)
		if len(data) > 1200 {
			t.Errorf("%s holds %d bytes, over max_file_size", name, len(data))
		}
	})
	return files, bytes
}
