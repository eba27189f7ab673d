package stacktest

import (
	"context"
	"fmt"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/secrets"
)

// A rename of a directory scans the new path of every entry it moves: a
// Slack webhook URL spans path components. An entry made in the tree
// after that scan, before the move (one turn's parallel calls: rename x
// to hooks.slack.com/services, create x/T…/B…/X…), would be moved
// unscanned, and the store would hold the webhook in its names. The
// rename must wait for the change, or the change for the rename.
func TestRenameRacingCreateKeepsSecretsOutOfNames(t *testing.T) {
	const rest = "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	changes := map[string]func(ctx context.Context, s memtool.Store) error{
		"create": func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "x/"+rest, []byte("x"), memtool.CreateOnly)
		},
		"mkdir": func(ctx context.Context, s memtool.Store) error {
			return s.Mkdir(ctx, "x/"+rest)
		},
		"rename": func(ctx context.Context, s memtool.Store) error {
			return s.(memtool.Renamer).Rename(ctx, "y", "x/"+rest)
		},
	}
	for name, base := range bases(t) {
		for what, change := range changes {
			for _, p := range []secrets.Policy{secrets.Reject, secrets.Redact} {
				for _, tenant := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/policy%d/tenant=%v", name, what, p, tenant), func(t *testing.T) {
						t.Parallel()
						renameRacingChange(t, base(), p, tenant, change)
					})
				}
			}
		}
	}
}

// renameRacingChange renames x to hooks.slack.com/services while change
// runs; with tenant, in tenant alice, the rename through one store Tenant
// returns and the change through another.
func renameRacingChange(t *testing.T, base memtool.Store, p secrets.Policy, tenant bool, change func(context.Context, memtool.Store) error) {
	ctx := context.Background()
	h := newHook(base)
	s := secrets.New(h, &secrets.Options{Policy: p})
	other := s
	if tenant {
		ts, ok := s.(memtool.Tenanted)
		if !ok || !memtool.Has[memtool.Tenanted](s) {
			t.Skip("the store has no tenants")
		}
		var err error
		if s, err = ts.Tenant(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
		if other, err = ts.Tenant(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"x", "x/T00000000", "x/T00000000/B00000000", "hooks.slack.com", "y"} {
		if err := s.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// The change starts as the scanned rename reaches the store, and has
	// a while to land before it.
	rerr, cerr := renameRacing(ctx, h, s, "x", "hooks.slack.com/services", func() error { return change(ctx, other) })
	t.Logf("rename x hooks.slack.com/services: %v; change: %v", rerr, cerr)
	err := memtool.Walk(ctx, s, "", func(name string, _ memtool.FileInfo) error {
		if f := secrets.Scan([]byte(name)); f != nil {
			t.Errorf("the store holds the name %q, with %s", name, f[0].Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
