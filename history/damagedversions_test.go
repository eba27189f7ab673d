package history_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// onDisk runs fn on a new store of each backend that keeps the versions
// on disk: a directory (filestore) and SQLite.
func onDisk(t *testing.T, fn func(t *testing.T, inner memtool.Store)) {
	for _, b := range backendtest.All() {
		if b.Name == "filestore" || b.Name == "sqlite" {
			t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t)) })
		}
	}
}

// versionsDir is the directory of the versions of name, as the wrapper
// names it.
func versionsDir(name string) string {
	sum := sha256.Sum256([]byte(name))
	return history.DirName + "/" + hex.EncodeToString(sum[:16])
}

// TestCounterAtMaxInt: a version counter damaged to the largest number
// there is must not hand out the number past it. Before, it wrapped
// round to a negative one: the version of the write was stored under a
// name that Versions does not list, and the content it replaced was lost
// to the user while the write answered success.
func TestCounterAtMaxInt(t *testing.T) {
	onDisk(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, nil)
		must.Succeed(t, s.WriteFile(ctx, "n.md", []byte("one"), memtool.CreateOnly))
		must.Succeed(t, s.WriteFile(ctx, "n.md", []byte("two"), memtool.Replace))
		must.Succeed(t, inner.WriteFile(ctx, versionsDir("n.md")+"/counter", []byte("9223372036854775807"), memtool.Replace))
		err := s.WriteFile(ctx, "n.md", []byte("three"), memtool.Replace)
		vs, verr := history.Versions(ctx, inner, "/memories/n.md")
		if verr != nil {
			t.Fatal(verr)
		}
		if err != nil {
			if got := storetest.ReadText(t, inner, "n.md"); got != "two" {
				t.Errorf("the write failed (%v) but n.md holds %q", err, got)
			}
			return
		}
		for _, v := range vs {
			if old, err := history.Read(ctx, inner, "/memories/n.md", v.N); err == nil && string(old) == "two" {
				return
			}
		}
		t.Errorf("the write succeeded, and no version listed (%+v) holds what it replaced", vs)
	})
}
