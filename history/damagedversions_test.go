package history_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

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
	backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
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

// TestPruneAgedDamagedPathFile: a path file that cannot be read as one
// (grown past any path by damage, or a directory in its place) must not
// stop PruneAged, and memtool gc, for every path: the versions it names
// are listed without a path, as the doc says of a directory that does
// not name its path.
func TestPruneAgedDamagedPathFile(t *testing.T) {
	for _, damage := range []string{"too large", "a directory"} {
		t.Run(damage, func(t *testing.T) {
			backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
				ctx := context.Background()
				now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				s := history.New(inner, &history.Options{MaxAge: time.Hour, Now: func() time.Time { return now }})
				for _, n := range []string{"a.md", "b.md"} {
					must.Succeed(t, s.WriteFile(ctx, n, []byte("one"), memtool.CreateOnly))
					must.Succeed(t, s.Remove(ctx, n))
				}
				pathFile := versionsDir("a.md") + "/path"
				must.Succeed(t, inner.Remove(ctx, pathFile))
				if damage == "too large" {
					must.Succeed(t, inner.WriteFile(ctx, pathFile, make([]byte, 2<<20), memtool.CreateOnly))
				} else {
					must.Succeed(t, inner.Mkdir(ctx, pathFile))
				}
				now = now.Add(2 * time.Hour)
				pruned, err := s.(*history.Store).PruneAged(ctx, false)
				if err != nil {
					t.Fatalf("PruneAged: %v", err)
				}
				if len(pruned) != 2 {
					t.Errorf("PruneAged dropped %+v, want the versions of both files", pruned)
				}
			})
		})
	}
}

// TestDuplicateVersionNumber: two entries of one path's versions with
// the same number (a copy gone wrong, an older build racing) make that
// number ambiguous: Read and Revert must not pick either one at random
// and answer success, possibly with the wrong content.
func TestDuplicateVersionNumber(t *testing.T) {
	backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		s := history.New(inner, nil)
		must.Succeed(t, s.WriteFile(ctx, "n.md", []byte("one"), memtool.CreateOnly))
		must.Succeed(t, s.WriteFile(ctx, "n.md", []byte("two"), memtool.Replace))
		vs, err := history.Versions(ctx, inner, "/memories/n.md")
		if err != nil || len(vs) != 1 {
			t.Fatalf("versions %+v, %v", vs, err)
		}
		dup := fmt.Sprintf("%s/%06d-%d-write", versionsDir("n.md"), vs[0].N, vs[0].Time.UnixNano()+1)
		must.Succeed(t, inner.WriteFile(ctx, dup, []byte("other"), memtool.CreateOnly))
		for range 5 {
			data, err := history.Read(ctx, inner, "/memories/n.md", vs[0].N)
			if err == nil && string(data) != "one" {
				t.Fatalf("Read of version %d, held twice, answered %q", vs[0].N, data)
			}
			if err := history.Revert(ctx, s, inner, "/memories/n.md", vs[0].N); err == nil {
				if got := storetest.ReadText(t, inner, "n.md"); got != "one" {
					t.Fatalf("Revert to version %d, held twice, made n.md %q", vs[0].N, got)
				}
			}
		}
	})
}
