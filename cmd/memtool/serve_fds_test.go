package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memtool serve on a directory store keeps open only the tenants it
// serves: once it drops one (--max-tenants), the tenant's directory
// descriptors close. Before, each tenant ever served held two until the
// server stopped, and enough tenants ran it out of descriptors.
func TestServeClosesDroppedTenants(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count descriptors with")
	}
	dir := filepath.Join(t.TempDir(), "m")
	admin := addKey(t, dir, "root", "admin")
	p := startServe(t, plainBinary(t), dir, "--max-tenants", "2")
	const tenants = 40
	for i := range tenants {
		body := fmt.Sprintf(`{"command":"create","path":"/memories/n.md","file_text":"tenant %d"}`, i)
		if status, answer := mustPost(t, p.url, admin, body, "X-Memtool-Tenant", fmt.Sprintf("t%d", i)); status != 200 || strings.Contains(answer, `"is_error":true`) {
			t.Fatalf("tenant t%d: %d %s", i, status, answer)
		}
	}
	tenantsDir, err := filepath.EvalSymlinks(filepath.Join(dir, ".memtool-tenants"))
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	open := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", p.cmd.Process.Pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, tenantsDir+"/") {
			open++
		}
	}
	// Two tenants kept, two descriptors each, and one more tenant while
	// a request that opened it has not yet dropped another.
	if open > 6 {
		t.Errorf("after %d tenants with --max-tenants 2, the server holds %d descriptors in their directories", tenants, open)
	}
	for i := range tenants { // dropped tenants open again, with their files
		answer := execMemtool(t, `{"command":"view","path":"/memories/n.md"}`+"\n", "--store", dir, "--tenant", fmt.Sprintf("t%d", i))
		if !strings.Contains(answer, fmt.Sprintf("tenant %d", i)) {
			t.Fatalf("tenant t%d after the server dropped it: %s", i, answer)
		}
	}
	body := `{"command":"view","path":"/memories/n.md"}`
	if _, answer := mustPost(t, p.url, admin, body, "X-Memtool-Tenant", "t0"); !strings.Contains(answer, "tenant 0") {
		t.Errorf("t0 served again: %s", answer)
	}
}
