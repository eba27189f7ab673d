//go:build linux

package filestore

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

// openFds counts this process's open descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(es)
}

// waitFds waits until at most want descriptors are open, for up to 10 s.
func waitFds(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := openFds(t)
		if n <= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open, want at most %d: pins leak", n, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPinsReleased: the pins of replaces and removals, made one after
// another and many at once (more than the background queue holds), are
// all closed, and every write and removal did what it should.
func TestPinsReleased(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 40
	for i := range n {
		if err := s.WriteFile(ctx, fmt.Sprintf("f%02d", i), []byte("v0"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	base := openFds(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("f%02d", i)
			for v := 1; v <= 10; v++ {
				if err := s.WriteFile(ctx, name, fmt.Appendf(nil, "v%d", v), memtool.Replace); err != nil {
					t.Error(err)
				}
				if err := s.Update(ctx, name, 1<<20, func(old []byte) ([]byte, error) { return append(old, '+'), nil }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range n {
		name := fmt.Sprintf("f%02d", i)
		got, err := s.ReadFile(ctx, name, 1<<20)
		if err != nil || string(got) != "v10+" {
			t.Fatalf("%s = %q, %v; want v10+", name, got, err)
		}
		if i%2 == 0 {
			if err := s.Remove(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFds(t, base)

	// Straight through release: more pins than the queue holds, released
	// at once, are all closed (the overflow by the releasing goroutine).
	var pins []pin
	d, err := os.Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	base = openFds(t)
	for range 1000 {
		p := s.pinAt(d, "f01")
		if !p.set {
			t.Fatal("pinAt pinned nothing")
		}
		pins = append(pins, p)
	}
	if got := openFds(t); got < base+1000 {
		t.Fatalf("%d descriptors open with 1000 pins, want at least %d", got, base+1000)
	}
	for _, p := range pins {
		p.release()
	}
	waitFds(t, base)
}

// TestPinHoldsTheReplacedFile: while a replace's pin is held, the old
// file's inode lives on (its link count 0), and a removal's pin is closed
// before Remove returns, whether it removed or failed.
func TestPinHoldsTheReplacedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := s.pinAt(d, "a")
	if !p.set {
		t.Fatal("pinAt pinned nothing")
	}
	var before unix.Stat_t
	if err := unix.Fstat(p.fd, &before); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "a", []byte("new"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	var after unix.Stat_t
	if err := unix.Fstat(p.fd, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != before.Ino || after.Nlink != 0 {
		t.Fatalf("pinned inode %d has %d links after the replace; want inode %d with 0", after.Ino, after.Nlink, before.Ino)
	}
	p.release()
	if got := s.pinAt(d, "nothing-here"); got.set {
		t.Fatal("pinAt pinned a missing name")
	}

	base := openFds(t)
	if err := s.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := openFds(t); got > base {
		t.Fatalf("%d descriptors open after Remove returned, want at most %d", got, base)
	}
	// A removal that fails (a directory not empty) lets its pin go too.
	if err := s.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "d/b", []byte("x"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	base = openFds(t)
	if err := s.Remove(ctx, "d"); err == nil {
		t.Fatal("Remove of a directory that is not empty succeeded")
	}
	if got := openFds(t); got > base {
		t.Fatalf("%d descriptors open after a failed Remove returned, want at most %d", got, base)
	}
}
