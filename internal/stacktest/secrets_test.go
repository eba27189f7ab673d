package stacktest

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/secrets"
)

const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"

// A version kept from before the secrets policy was on holds a token: a
// revert through the stack is refused under reject, redacted under
// redact, and the token reaches neither the file nor the audit log; nor
// does a rename to a path holding it.
func TestSecretNeverReachesStoreOrLogThroughRevertOrRename(t *testing.T) {
	for _, redact := range []bool{false, true} {
		for name, base := range bases(t) {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				st := newStack(t, base(), stackOptions{redact: redact})
				// Below the secrets policy, as a store used before it was on.
				if err := st.hist.WriteFile(ctx, "x", []byte("key "+token+"\n"), memtool.CreateOnly); err != nil {
					t.Fatal(err)
				}
				if err := st.hist.WriteFile(ctx, "x", []byte("clean\n"), memtool.Replace); err != nil {
					t.Fatal(err)
				}
				vs, err := history.Versions(ctx, st.belowHistory, "/memories/x")
				if err != nil || len(vs) != 1 {
					t.Fatalf("versions: %v, %v", vs, err)
				}
				err = history.Revert(ctx, st.top, st.belowHistory, "/memories/x", vs[0].N)
				if redact != (err == nil) {
					t.Errorf("revert (redact %v): %v", redact, err)
				}
				got, err := st.top.ReadFile(ctx, "x", 1<<20)
				if err != nil || strings.Contains(string(got), token) {
					t.Errorf("x holds the token after revert: %q, %v", got, err)
				}
				// Refused, x is as it was; redacted, x is the version with
				// only the token cut out.
				ok := string(got) == "clean\n"
				if redact {
					ok = strings.HasPrefix(string(got), "key ") && strings.HasSuffix(string(got), "\n") && len(got) > len("key \n")
				}
				if !ok {
					t.Errorf("x after revert (redact %v): %q", redact, got)
				}
				res := st.run(t, map[string]any{"command": "rename", "old_path": "/memories/x", "new_path": "/memories/" + token})
				if !res.IsError {
					t.Errorf("rename to the token: %q", res.Text)
				}
				// Refused, the rename moved nothing: x is in place, and no
				// name in the store holds the token.
				if after, err := st.top.ReadFile(ctx, "x", 1<<20); err != nil || string(after) != string(got) {
					t.Errorf("x after the refused rename: %q, %v; want %q", after, err, got)
				}
				err = memtool.Walk(ctx, st.base, "", func(name string, _ memtool.FileInfo) error {
					if strings.Contains(name, token) {
						t.Errorf("the store holds the name %q", name)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				st.run(t, map[string]any{"command": "view", "path": "/memories/" + token + "/y"})
				if strings.Contains(st.log.String(), token) || strings.Contains(res.Text, token) {
					t.Errorf("the token reached the audit log or the answer:\n%s\n%s", st.log.String(), res.Text)
				}
			})
		}
	}
}

// A rename through the stack whose new path is clean, but which would
// give an entry below it a name holding a secret (a Slack webhook URL
// spans path components), is refused and moves nothing.
func TestRenameOfTreeKeepsSecretsOutOfNames(t *testing.T) {
	const rest = "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	for _, redact := range []bool{false, true} {
		for name, base := range bases(t) {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				st := newStack(t, base(), stackOptions{redact: redact})
				st.mustRun(t, create("/memories/x/"+rest, "text"))
				st.mustRun(t, create("/memories/hooks.slack.com/keep.md", "k"))
				res := st.run(t, map[string]any{"command": "rename", "old_path": "/memories/x", "new_path": "/memories/hooks.slack.com/services"})
				if !res.IsError {
					t.Errorf("rename x hooks.slack.com/services (redact %v): %q", redact, res.Text)
				}
				if got, err := st.top.ReadFile(ctx, "x/"+rest, 1<<20); err != nil || string(got) != "text" {
					t.Errorf("x/%s after the refused rename: %q, %v", rest, got, err)
				}
				err := memtool.Walk(ctx, st.base, "", func(name string, _ memtool.FileInfo) error {
					if f := secrets.Scan([]byte(name)); f != nil {
						t.Errorf("the store holds the name %q, with %s", name, f[0].Kind)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
