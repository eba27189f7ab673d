package resource_test

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// corpusPaths returns every path of the hostile-input corpus
// (testdata/hostile-paths.jsonl): the path, old_path and new_path of each
// line's command.
func corpusPaths(t *testing.T) []string {
	f, err := os.Open("../../testdata/hostile-paths.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Cmd map[string]any `json:"cmd"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		for _, k := range []string{"path", "old_path", "new_path"} {
			if p, ok := line.Cmd[k].(string); ok {
				out = append(out, p)
			}
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d corpus paths", len(out))
	}
	return out
}

// snapshot is every name and content under dir.
func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		data, _ := os.ReadFile(p)
		b.WriteString(p + "\x00" + string(data) + "\x00")
		return nil
	})
	return b.String()
}

// TestHostilePaths sends every path of the hostile corpus to every route
// of a directory store with a secret beside it: a path the gate refuses is
// 400 bad_path on every route and changes nothing; no answer is a 500,
// shows the host directory or the secret, and nothing outside the store
// changes.
func TestHostilePaths(t *testing.T) {
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside")
	os.Mkdir(outside, 0o700)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE-SECRET"), 0o600)
	dir := filepath.Join(tmp, "memories")
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.WriteFile(t.Context(), "a.txt", []byte("alpha\n"), memtool.CreateOnly)
	srv := serveStore(t, s, true, nil)
	before := snapshot(t, outside)

	for _, path := range corpusPaths(t) {
		name, _, gateErr := memtool.CleanPath(path)
		q := "?path=" + url.QueryEscape(path)
		rename := func(from, to string) []byte {
			b, _ := json.Marshal(map[string]string{"from": from, "to": to})
			return b
		}
		requests := []struct {
			method, target string
			body           []byte
		}{
			{"GET", "/v1/entry" + q, nil},
			{"GET", "/v1/file" + q, nil},
			{"GET", "/v1/dir" + q, nil},
			{"GET", "/v1/files?prefix=" + url.QueryEscape(path), nil},
			{"PUT", "/v1/file" + q, []byte("x")},
			{"POST", "/v1/dir" + q, nil},
			{"POST", "/v1/rename", rename("/memories/a.txt", path)},
			{"POST", "/v1/rename", rename(path, "/memories/moved")},
			{"DELETE", "/v1/entry" + q + "&recursive=true", nil},
		}
		inStore := snapshot(t, dir)
		for _, r := range requests {
			resp := mustDo(t, srv, r.method, r.target, nil, r.body)
			b := string(body(t, resp))
			switch {
			case resp.StatusCode == http.StatusInternalServerError:
				t.Errorf("%s %q: 500 %s", r.method, path, b)
			case strings.Contains(b, tmp) || strings.Contains(b, "OUTSIDE-SECRET"):
				t.Errorf("%s %q: the answer shows the host: %s", r.method, path, b)
			case gateErr != nil && (resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, `"bad_path"`)):
				t.Errorf("%s %q: the gate refuses it (%v), the API answered %d %s", r.method, path, gateErr, resp.StatusCode, b)
			}
			if r.target == "/v1/rename" && resp.StatusCode == http.StatusNoContent {
				s.Rename(t.Context(), name, "a.txt") // put it back for the next requests
			}
		}
		if gateErr != nil && snapshot(t, dir) != inStore {
			t.Errorf("%q: refused by the gate, yet the store changed", path)
		}
		if snapshot(t, outside) != before {
			t.Fatalf("%q: something outside the store changed", path)
		}
	}
}
