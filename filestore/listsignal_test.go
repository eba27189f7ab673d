//go:build linux

package filestore

import (
	"context"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// A listing of a directory of more than max names is read once even when
// its reads come in parts (a pending signal ends a getdents call after
// its first entry, as Go's preemption signals do under load): no
// listing of one moment is owed past max, so a read in parts is not made
// again, as it is for a directory of at most max names.
func TestListDirInPartsReadsManyNamesOnce(t *testing.T) {
	ctx := context.Background()
	dir, s := openTemp(t)
	want := layNotes(t, dir, 3000)
	read, calls := 0, 0
	readHook = func(n int) { read += n; calls++ }
	defer func() { readHook = nil }()
	if err := s.ListNames(ctx, "", func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	onePass, passCalls := read, calls

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			syscall.Kill(os.Getpid(), syscall.SIGURG)
		}
	})
	defer wg.Wait()
	defer close(stop)
	inParts := 0
	for range 50 {
		read, calls = 0, 0
		var got []string
		_, many, err := s.ListDir(ctx, "", 100, func(n string) bool { got = append(got, n); return true })
		if err != nil || !many {
			t.Fatalf("ListDir(max 100): many %v, %v", many, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("ListDir(max 100) gave %d names (%d distinct), want each of the %d once", len(got), len(slices.Compact(got)), len(want))
		}
		if calls > passCalls+2 {
			inParts++
		}
		if read != onePass {
			t.Fatalf("ListDir(max 100) read %d bytes of entries in %d calls; one pass over the directory is %d", read, calls, onePass)
		}
	}
	if inParts == 0 {
		t.Skip("no read came in parts: the signals did not reach the reading thread in time")
	}
	t.Logf("%d of 50 listings were read in parts", inParts)
}
