package secretscan

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// compiled lists the kinds of the rules whose pattern is compiled.
func compiled() []string {
	var kinds []string
	for i := range rules {
		if rules[i].re != nil {
			kinds = append(kinds, rules[i].kind)
		}
	}
	return kinds
}

// TestPatternsCompileLazily: loading the package compiles no pattern, and
// a scan compiles only the rules whose anchors the text holds. It runs in
// a process of its own, where no other test has scanned anything yet.
func TestPatternsCompileLazily(t *testing.T) {
	const env = "SECRETS_LAZY_CHILD"
	if os.Getenv(env) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPatternsCompileLazily$", "-test.count=1")
		cmd.Env = append(os.Environ(), env+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	if got := compiled(); len(got) != 0 {
		t.Fatalf("compiled before any scan: %q", got)
	}
	Scan([]byte("nothing to see here"))
	if got := compiled(); len(got) != 0 {
		t.Errorf("compiled by a text without anchors: %q", got)
	}
	Scan([]byte("key AKIAIOSFODNN7EXAMPLE"))
	if got := compiled(); len(got) != 1 || got[0] != "an AWS access key ID" {
		t.Errorf("compiled by a text with an AWS key's anchor: %q, want just the AWS key rule", got)
	}
}

// TestPatternsCompile: every rule is confirmed either by code or by a
// pattern, and every pattern is a valid regular expression anchored at its
// start (a bad one would panic only on its first use) with a window.
func TestPatternsCompile(t *testing.T) {
	all := []*rule{&keyEnd}
	for i := range rules {
		all = append(all, &rules[i])
	}
	for _, r := range all {
		if (r.pattern == "") == (r.confirm == nil) {
			t.Errorf("%s: want a pattern or a confirm func, not both or neither", r.kind)
			continue
		}
		if r.pattern == "" {
			continue
		}
		if _, err := regexp.Compile(r.pattern); err != nil || r.pattern[0] != '^' || r.max <= 0 {
			t.Errorf("%s: pattern %q, window %d: %v (want a valid expression starting with ^, and a window)", r.kind, r.pattern, r.max, err)
		}
	}
}
