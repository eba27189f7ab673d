package audit_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/memstore"
)

// After a power loss, a log's last block can read as zero bytes: a file
// system may have made its new size durable before the data written there
// (XFS, ext4 with data=writeback). Read skips those zeros, whether they
// follow whole lines or the start of an entry, as it skips an entry cut
// off, and the entries logged after them are read.
func TestReadSkipsZerosOfAPowerLoss(t *testing.T) {
	first := `{"time":"2026-12-01T00:00:00Z","op":"create","path":"/memories/a.md","outcome":"ok"}` + "\n"
	zeros := strings.Repeat("\x00", 4096)
	for name, tail := range map[string]string{
		"zeros":         zeros,
		"cut and zeros": `{"time":"2026-12-01T00:00:01Z","op":"upd` + zeros,
		"zeros between": zeros[:100] + "\n" + zeros[:7],
		// As many as the bytes logged that did not reach the disk, which
		// on a busy log can pass the longest line Read takes (1 MiB).
		"more zeros than a line": strings.Repeat("\x00", 2<<20),
	} {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(log, []byte(first+tail), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := audit.OpenLog(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := audit.New(memstore.New(), f, nil).Mkdir(context.Background(), "d"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if read, want := logPaths(t, log), []string{"/memories/a.md", "/memories/d"}; !slices.Equal(read, want) {
				t.Errorf("read %q, want %q", read, want)
			}
		})
	}
}

// logPaths reads the log at name and returns the path of each entry.
func logPaths(t *testing.T, name string) []string {
	t.Helper()
	r, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var read []string
	if err := audit.Read(r, audit.Filter{}, func(e audit.Entry) error { read = append(read, e.Path); return nil }); err != nil {
		t.Fatalf("reading the log: %v", err)
	}
	return read
}
