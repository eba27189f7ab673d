//go:build linux

package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/memstore"
)

// Two writers of one log, as memtool serve's tenants (each opens the log
// for its own stack) or two memtool processes are: one of them finds the
// disk full and puts part of its line in the file, and the other, which
// did not see that, logs its next line once space is free. That line is
// read whole, and so is every line after it.
func TestSharedLogOnFullDisk(t *testing.T) {
	dir, filler := nearlyFull(t)
	name := filepath.Join(dir, "audit.jsonl")
	open := func() *os.File {
		f, err := audit.OpenLog(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	var failedA, failedB int
	fa, fb := open(), open()
	a := audit.New(memstore.New(), fa, &audit.Options{Tenant: "a", OnError: func(error) { failedA++ }})
	b := audit.New(memstore.New(), fb, &audit.Options{Tenant: "b", OnError: func(error) { failedB++ }})
	ctx := context.Background()
	logged := 0
	for ; failedA == 0 && logged < 1000; logged++ {
		if err := a.Mkdir(ctx, fmt.Sprintf("before-%03d", logged)); err != nil {
			t.Fatal(err)
		}
	}
	if failedA == 0 {
		t.Fatal("the log never filled the disk")
	}
	logged-- // a's last line did not make it whole
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 2 {
		for _, s := range []struct {
			name  string
			store memtool.Store
		}{{"b", b}, {"a", a}} {
			d := fmt.Sprintf("after-%s%d", s.name, i)
			if err := s.store.Mkdir(ctx, d); err != nil {
				t.Fatal(err)
			}
			want = append(want, "/memories/"+d)
		}
	}
	if failedB != 0 {
		t.Fatalf("b's writes failed %d times", failedB)
	}

	r, err := os.Open(name)
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
	if len(read) != logged+len(want) || fmt.Sprint(read[logged:]) != fmt.Sprint(want) {
		t.Errorf("read %d entries, the last %q; want the %d logged whole before the disk filled, then %q", len(read), read[max(0, len(read)-len(want)):], logged, want)
	}
}
