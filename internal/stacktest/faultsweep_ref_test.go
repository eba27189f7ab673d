package stacktest

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// The sweep holds each run with a fault to the run without one, so a
// policy that does the wrong thing every time (keeps no version of what
// a command overwrote, prunes nothing, refuses every command, changes
// nothing and says it did) passes it. checkReference holds the run
// without a fault to what each scenario must do.
func checkReference(t *testing.T, sc faultScenario, ref faultRun) {
	t.Helper()
	before, after := ref.before, ref.after
	bad := func(format string, args ...any) {
		t.Errorf("%s without a fault: answered %q:\n"+format+"\nbefore:\n%s\nafter:\n%s",
			append(append([]any{sc.name, ref.res.Text}, args...), before, after)...)
	}
	refused := map[string]bool{"create existing": true, "create over quota": true, "str_replace not found": true}
	if ref.res.IsError != refused[sc.name] {
		bad("want an error: %v", refused[sc.name])
	}
	changes := !refused[sc.name] && !strings.HasPrefix(sc.name, "view")
	if sc.name == "rekey" {
		changes = false // the memory reads the same under the new key
	}
	if changes == after.same(before) {
		bad("want the store changed: %v", changes)
	}
	// Every text the memory held is still there: in a file, in the
	// expiry trash, or as a version.
	kept := map[string]bool{}
	for _, v := range after.tree {
		kept[v] = true
	}
	for _, vs := range after.versions {
		for _, v := range vs {
			kept[v] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before.tree)) {
		if v := before.tree[k]; !strings.HasSuffix(k, "/") && !kept[v] {
			bad("the text of %s (%q) is neither a file nor a version", k, v)
		}
	}
	if sc.history != nil && sc.history.MaxVersions > 0 {
		for p, vs := range after.versions {
			if len(vs) > sc.history.MaxVersions {
				bad("%s keeps %d versions, over MaxVersions %d", p, len(vs), sc.history.MaxVersions)
			}
		}
	}
}
