//go:build linux

package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/memstore"
)

// A log on a file system that fills up: the write that finds the disk full
// may put part of its line in the file. The lines logged once space is
// free again must still be read, each on its own line; the cut-off line is
// skipped (its write was reported to OnError).
func TestLogOnFullDisk(t *testing.T) {
	dir, filler := nearlyFull(t)
	f, err := os.OpenFile(filepath.Join(dir, "audit.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var failed int
	s := audit.New(memstore.New(), f, &audit.Options{OnError: func(error) { failed++ }})
	ctx := context.Background()
	logged := 0
	for ; failed == 0 && logged < 1000; logged++ {
		if err := s.Mkdir(ctx, fmt.Sprintf("before-%03d", logged)); err != nil {
			t.Fatal(err)
		}
	}
	if failed == 0 {
		t.Fatal("the log never filled the disk")
	}
	logged-- // the last one's line did not make it whole
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	const after = 3
	for i := range after {
		if err := s.Mkdir(ctx, fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	r, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var read []string
	err = audit.Read(r, audit.Filter{}, func(e audit.Entry) error {
		read = append(read, e.Path)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the log: %v", err)
	}
	if len(read) != logged+after || read[len(read)-1] != "/memories/after-2" || read[logged] != "/memories/after-0" {
		t.Errorf("read %d entries (the last %q), want the %d logged whole before the disk filled and the %d after", len(read), read[len(read)-1:], logged, after)
	}
}

// A log whose last line a crashed process left cut off: OpenLog ends that
// line, so the entries logged after it are read, each on its own line.
func TestOpenLogEndsACutOffLine(t *testing.T) {
	name := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(name, []byte(`{"time":"2026-12-01T00:00:00Z","op":"create","path":"/memories/a.md","outcome":"ok"}`+"\n"+`{"time":"2026-12-01T00:00:01Z","op":"upd`), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second open finds the line ended
		f, err := audit.OpenLog(name)
		if err != nil {
			t.Fatal(err)
		}
		s := audit.New(memstore.New(), f, nil)
		if err := s.Mkdir(context.Background(), fmt.Sprintf("d%d", i)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if read, want := logPaths(t, name), []string{"/memories/a.md", "/memories/d0", "/memories/d1"}; !slices.Equal(read, want) {
		t.Errorf("read %q, want %q", read, want)
	}
	if info, err := os.Stat(name); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the log's mode: %v, %v", info.Mode(), err)
	}
}

// nearlyFull returns a directory on a tmpfs of 64 KiB whose every page
// but one is taken by the file filler: a log there fills that page, and
// the line that crosses into the next is cut short. Removing filler frees
// the space again.
func nearlyFull(t *testing.T) (dir, filler string) {
	dir = hostfault.Tmpfs(t, "size=64k,mode=0700")
	filler = filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 60<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, filler
}
