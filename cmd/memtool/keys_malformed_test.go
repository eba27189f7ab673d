package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysMalformedRecord: a record of a directory store's key file that
// is no valid key (here a hand edit that left no tenant) is not used, and
// the others keep working: keys list shows the good key and names the bad
// record (exit status not 0), and memtool serve is ready and answers the
// good key. Before, keys list showed nothing but the error, and /readyz
// answered 503, which takes every replica out of a load balancer.
func TestKeysMalformedRecord(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	token := addKey(t, dir, "alice", "write")
	var recs []map[string]any
	data, err := os.ReadFile(dir + ".keys")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &recs); err != nil || len(recs) != 1 {
		t.Fatalf("key file: %v, %d records", err, len(recs))
	}
	good := recs[0]["id"].(string)
	bad := map[string]any{}
	for k, v := range recs[0] {
		bad[k] = v
	}
	bad["id"], bad["tenant"] = "0123456789abcdef", ""
	data, _ = json.Marshal(append(recs, bad))
	if err := os.WriteFile(dir+".keys", data, 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runMemtool(t, childEnv(), "", "keys", "list", "--store", dir)
	if code == 0 || !strings.Contains(out, good) || !strings.Contains(errOut, "0123456789abcdef") || !strings.Contains(errOut, "malformed") {
		t.Errorf("keys list: exit %d, stdout %q, stderr %q; want the good key listed and the bad record named, exit not 0", code, out, errOut)
	}

	p := startServe(t, plainBinary(t), dir)
	if status, body, err := do("GET", p.url+"/readyz", "", ""); err != nil || status != 200 {
		t.Errorf("/readyz: %d %q %v; want 200", status, body, err)
	}
	if status, body := mustPost(t, p.url, token, `{"command":"view","path":"/memories"}`); status != 200 || strings.Contains(body, `"is_error":true`) {
		t.Errorf("view with the good key: %d %s", status, body)
	}
	if !strings.Contains(p.log(), "key records that are not used") {
		t.Errorf("serve did not warn of the bad record:\n%s", p.log())
	}
}
