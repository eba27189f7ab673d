package stacktest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/limits"
)

// A rename of a directory is checked against the path limits for every
// entry it moves. An entry made in the tree after that check, before the
// move (one turn's parallel calls: rename a, create in a), would be moved
// unchecked, past MaxDepth or MaxPathLength: the rename must wait for it,
// or it for the rename. The store under the wrapper renames in one step;
// the wrapper is over it directly (the full stack's encryption has no
// Rename, and Memory then copies entry by entry, each checked).
func TestRenameRacingCreateKeepsPathLimits(t *testing.T) {
	// a/b moves to p/a/b: 3 levels, 14 bytes below /memories/. Anything
	// made in a/b ends up 4 levels deep and at least 16 bytes long.
	opts := []limits.Options{
		{MaxDepth: 3},
		{MaxPathLength: len("/memories/p/a/b/c") - 1},
		{MaxDepth: 3, MaxBytes: 1 << 20},
		{MaxDepth: 3, MaxFiles: 100, MaxBytes: 1 << 20},
	}
	changes := map[string]func(ctx context.Context, s memtool.Store) error{
		"create": func(ctx context.Context, s memtool.Store) error {
			return s.WriteFile(ctx, "a/b/c", []byte("c"), memtool.CreateOnly)
		},
		"mkdir": func(ctx context.Context, s memtool.Store) error { return s.Mkdir(ctx, "a/b/c") },
		"rename": func(ctx context.Context, s memtool.Store) error {
			return s.(memtool.Renamer).Rename(ctx, "c", "a/b/c")
		},
	}
	for name, base := range bases(t) {
		for _, o := range opts {
			for what, change := range changes {
				t.Run(fmt.Sprintf("%s/%+v/%s", name, o, what), func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					h := newHook(base())
					s := limits.New(h, &o)
					for _, d := range []string{"a", "a/b", "p", "c"} {
						if err := s.Mkdir(ctx, d); err != nil {
							t.Fatal(err)
						}
					}
					// The change starts as the checked rename reaches the
					// store, and has a while to land before it.
					rerr, cerr := renameRacing(ctx, h, s, "a", "p/a", func() error { return change(ctx, s) })
					t.Logf("rename a p/a: %v; %s: %v", rerr, what, cerr)
					err := memtool.Walk(ctx, h, "", func(name string, _ memtool.FileInfo) error {
						vp := memtool.VirtualPath(name)
						if d := strings.Count(name, "/") + 1; name != "" && o.MaxDepth > 0 && d > o.MaxDepth {
							t.Errorf("%s is %d levels deep, over MaxDepth %d", vp, d, o.MaxDepth)
						}
						if o.MaxPathLength > 0 && len(vp) > o.MaxPathLength {
							t.Errorf("%s is %d bytes long, over MaxPathLength %d", vp, len(vp), o.MaxPathLength)
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
}
