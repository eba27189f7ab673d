package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
)

// "The check and the write are one atomic step" (CreateOnly): of many
// creates of one name, exactly one wins.
func testCreateOnlyOneWinner(t *testing.T, s memtool.Store) {
	mustMkdir(t, s, "d")
	n := goroutines()
	errs := race(n, func(i int) error {
		return s.WriteFile(t.Context(), "d/x", []byte(fmt.Sprintf("writer %d", i)), memtool.CreateOnly)
	})
	winner := oneWinner(t, errs, func(i int) string { return fmt.Sprintf("WriteFile(d/x, CreateOnly) by writer %d", i) })
	checkFile(t, s, "d/x", fmt.Sprintf("writer %d", winner))
}

// oneWinner checks the errors of racing calls that create one name:
// exactly one succeeded, and every other failed with ErrExist. call(i)
// describes the i-th call. It returns the index of the one that succeeded.
func oneWinner(t *testing.T, errs []error, call func(i int) string) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("%s and %s both succeeded", call(winner), call(i))
		case err == nil:
			winner = i
		case !errors.Is(err, memtool.ErrExist):
			t.Errorf("losing %s = %v, want ErrExist", call(i), err)
		}
	}
	if winner < 0 {
		t.Fatalf("none of the %d racers succeeded, e.g. %s: %v", len(errs), call(0), errs[0])
	}
	return winner
}

// Mkdir is linearizable: of many Mkdirs of one name, exactly one wins.
func testMkdirOneWinner(t *testing.T, s memtool.Store) {
	n := goroutines()
	errs := race(n, func(int) error { return s.Mkdir(t.Context(), "d") })
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, memtool.ErrExist):
			t.Errorf("losing Mkdir(d) %d = %v, want ErrExist", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d concurrent Mkdir(d) succeeded, want exactly 1", wins, n)
	}
	checkDir(t, s, "d")
}

// "a reader sees a file's old or new content, never a mix."
func testReadersSeeWholeContent(t *testing.T, s memtool.Store) {
	versions := []string{strings.Repeat("a", 3000), strings.Repeat("b", 1000) + "\n", strings.Repeat("c", 5000)}
	mustWrite(t, s, "f", versions[0])
	writes := 60
	if testing.Short() {
		writes = 20
	}
	done := make(chan struct{})
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for reads := 0; ; reads++ {
				select {
				case <-done:
					if reads > 0 {
						return
					}
				default:
				}
				data, err := s.ReadFile(t.Context(), "f", noLimit)
				if err == nil && !slices.Contains(versions, string(data)) {
					err = fmt.Errorf("read %d bytes that are none of the written versions (%.20q…)", len(data), data)
				}
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
				}
			}
		})
	}
	for i := range writes {
		next := []byte(versions[(i+1)%len(versions)])
		var err error
		if i%2 == 0 {
			err = s.WriteFile(t.Context(), "f", next, memtool.Replace)
		} else {
			err = s.Update(t.Context(), "f", noLimit, func([]byte) ([]byte, error) { return next, nil })
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	close(done)
	wg.Wait()
	for i, msg := range bad {
		if i == 5 {
			t.Errorf("… and %d more", len(bad)-5)
			break
		}
		t.Errorf("a reader during writes: %s", msg)
	}
}

// "Every method … honours ctx cancellation", and "A method that returns an
// error has changed nothing": with a cancelled context every method fails
// with context.Canceled and the store is as it was.
func testAlreadyCancelled(t *testing.T, s memtool.Store) {
	before := makeTree(t, s, someTree)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(call string, err error) {
		t.Helper()
		WantErr(t, call+" with a cancelled context", err, context.Canceled)
	}
	_, err := s.Stat(ctx, "f")
	check("Stat(f)", err)
	_, err = s.ReadFile(ctx, "f", noLimit)
	check("ReadFile(f)", err)
	_, err = s.ReadDir(ctx, "d")
	check("ReadDir(d)", err)
	check("WriteFile(new, CreateOnly)", s.WriteFile(ctx, "new", []byte("new"), memtool.CreateOnly))
	check("WriteFile(f, Replace)", s.WriteFile(ctx, "f", []byte("new"), memtool.Replace))
	check("Update(f)", s.Update(ctx, "f", noLimit, func([]byte) ([]byte, error) { return []byte("new"), nil }))
	check("Mkdir(newdir)", s.Mkdir(ctx, "newdir"))
	check("Remove(d/x)", s.Remove(ctx, "d/x"))
	check("Remove(empty)", s.Remove(ctx, "empty"))
	if r, ok := s.(memtool.Renamer); ok && memtool.Has[memtool.Renamer](s) {
		check("Rename(f, moved)", r.Rename(ctx, "f", "moved"))
		check("Rename(d, moved)", r.Rename(ctx, "d", "moved"))
	}
	if r, ok := s.(memtool.RemoveAller); ok && memtool.Has[memtool.RemoveAller](s) {
		check("RemoveAll(d)", r.RemoveAll(ctx, "d"))
	}
	unchanged(t, s, before, "calls with a cancelled context")
}
