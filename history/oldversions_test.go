package history_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
)

// A memtool from before version counters (2026-11-30, before bcb2ab8)
// numbered a version one above the highest there and left the counter as
// it was. Sharing a store with it, as during a rolling upgrade, or run on
// a store after a newer one, it leaves a counter behind the versions: a
// version this memtool numbered from the counter alone took a number
// already kept, so two versions answered to one number (revert --to N
// brought back either), and the newest sorted below older ones, the first
// that MaxVersions prunes. A new version is numbered above both.
func TestVersionAboveOldBuildsVersions(t *testing.T) {
	ctx := context.Background()
	raw := memstore.New()
	s := history.New(raw, &history.Options{MaxVersions: 3})
	for _, text := range []string{"v0", "v1"} {
		if err := s.WriteFile(ctx, "f.md", []byte(text), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	// The old build edits twice: versions 2 and 3, the counter still at 1.
	sum := sha256.Sum256([]byte("f.md"))
	dir := path.Join(history.DirName, hex.EncodeToString(sum[:16]))
	for n, text := range []string{"v2", "v3"} {
		entry := fmt.Sprintf("%06d-%d-update", n+2, time.Now().UnixNano())
		if err := raw.WriteFile(ctx, path.Join(dir, entry), []byte(text), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteFile(ctx, "f.md", []byte("v4"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	vs, err := history.Versions(ctx, raw, "/memories/f.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		data, err := history.Read(ctx, raw, "/memories/f.md", v.N)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%s", v.N, data))
	}
	// v0 was pruned (MaxVersions 3); v1, the content the last write
	// replaced, is the newest version.
	if want := "[2:v2 3:v3 4:v1]"; fmt.Sprint(got) != want {
		t.Errorf("versions %v, want %s", got, want)
	}
}
