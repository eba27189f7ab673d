package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyHistoryValuesNotSilentlyChanged: a history value that the
// history package would read as something else than written is refused,
// naming the field, rather than silently replaced. A max_age that is not
// positive ("-1h", "0d-1h", "1d-48h") was taken as "keep versions for
// ever", and "0s" or "0d" as the 30-day default; max_versions 0 was taken
// as the default of 20.
func TestPolicyHistoryValuesNotSilentlyChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ policy, want string }{
		{`{"history":{"max_age":"-1h"}}`, `history.max_age: "-1h"`},
		{`{"history":{"max_age":"0d-1h"}}`, `history.max_age: "0d-1h"`},
		{`{"history":{"max_age":"1d-48h"}}`, `history.max_age: "1d-48h"`},
		{`{"history":{"max_age":"0s"}}`, `history.max_age: "0s"`},
		{`{"history":{"max_age":"0d"}}`, `history.max_age: "0d"`},
		{`{"history":{"max_versions":0}}`, `history.max_versions: 0`},
	} {
		name := filepath.Join(dir, "policy.json")
		if err := os.WriteFile(name, []byte(c.policy), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadPolicy(name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("policy %s: %v, want an error containing %q", c.policy, err, c.want)
		}
	}
	for _, ok := range []string{
		`{"history":{"max_age":"1s"}}`,
		`{"history":{"max_age":"1d12h"}}`,
		`{"history":{"max_versions":1,"max_age":"30d"}}`,
		`{"history":{}}`,
	} {
		name := filepath.Join(dir, "policy.json")
		if err := os.WriteFile(name, []byte(ok), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadPolicy(name); err != nil {
			t.Errorf("policy %s: %v", ok, err)
		}
	}
}
