package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// The suite is tested by feeding it stores that each break one sentence of
// the contract and checking that it fails, and fails where it should. A
// failing suite fails the test that runs it, so each broken store runs in a
// child process: this test binary again, selected by brokenEnv.
const brokenEnv = "STORETEST_BROKEN"

// brokenStores names each defect and the subtests that must catch it.
var brokenStores = []struct {
	defect string
	caught []string
}{
	{"none", nil}, // the control: a faithful wrapper passes
	{"nil-for-missing", []string{"Stat/Missing", "Stat/UnderFile", "ReadFile/Missing"}},
	{"plain-errors", []string{"Stat/Missing", "ReadFile/Missing", "ReadDir/Missing", "Update/Missing"}},
	{"no-is-dir", []string{"ReadFile/Dir", "Update/Dir"}},
	{"ignores-limit", []string{"ReadFile/Limit", "Update/Limit"}},
	{"wrong-dir-entries", []string{"ReadDir/Entries"}},
	{"shows-own-entries", []string{"ReadDir/EmptyRoot"}},
	{"create-replaces", []string{"WriteFile/CreateOnlyExisting"}},
	{"replaces-dirs", []string{"WriteFile/ReplaceDir"}},
	{"creates-parents", []string{"WriteFile/MissingParent"}},
	{"wraps-fn-error", []string{"Update/FnError"}},
	{"writes-on-fn-error", []string{"Update/FnError"}},
	{"loses-updates", []string{"Update/ConcurrentAppends"}},
	{"mkdir-existing-ok", []string{"Mkdir/Existing"}},
	{"remove-not-empty", []string{"Remove/NotEmpty"}},
	{"rename-replaces", []string{"Rename/ExistingDestination"}},
	{"rename-racy", []string{"Rename/ConcurrentOneWinner"}},
	{"rename-copies", []string{"Rename/File", "Rename/Dir"}},
	{"removeall-shallow", []string{"RemoveAll/Tree"}},
	{"removeall-prefix-range", []string{"RemoveAll/PrefixNeighbours"}},
	{"create-racy", []string{"Concurrency/CreateOnlyOneWinner"}},
	{"torn-writes", []string{"Concurrency/ReadersSeeWholeContent"}},
	{"ignores-cancel", []string{"Cancel/AlreadyCancelled"}},
	{"replace-same-size-skipped", []string{"WriteFile/Replace"}},
	{"stale-listing", []string{"Remove/File", "Rename/File", "RemoveAll/Tree"}},
	{"hidden-orphans", []string{"Rename/Dir", "RemoveAll/Tree"}},
	{"remove-tombstone", []string{"Remove/File", "Remove/EmptyDir"}},
	{"shares-buffers", []string{"ReadFile/Content", "Update/Replaces"}},
}

func TestSuiteCatchesBrokenStores(t *testing.T) {
	if defect, ok := os.LookupEnv(brokenEnv); ok {
		// The child: run the suite on the broken store and let it fail.
		storetest.Run(t, func(*testing.T) memtool.Store { return newBroken(defect) })
		return
	}
	for _, bs := range brokenStores {
		t.Run(bs.defect, func(t *testing.T) {
			t.Parallel()
			checkCaught(t, "TestSuiteCatchesBrokenStores", bs.defect, bs.caught)
		})
	}
}

// checkCaught runs the test named test again in a child process, with
// brokenEnv set to defect, and checks that the subtests caught fail (none,
// and the child passes, if caught is nil).
func checkCaught(t *testing.T, test, defect string, caught []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenEnv+"="+defect)
	out, err := cmd.CombinedOutput()
	failLine := regexp.MustCompile(`--- FAIL: ` + test + `/(\S+)`)
	var failed []string
	for _, m := range failLine.FindAllStringSubmatch(string(out), -1) {
		failed = append(failed, m[1])
	}
	if caught == nil {
		if err != nil {
			t.Fatalf("the suite fails a faithful store (%v):\n%s", err, out)
		}
		return
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the suite passed a store that %s (err %v):\n%s", defect, err, out)
	}
	for _, want := range caught {
		if !slices.Contains(failed, want) {
			t.Errorf("subtest %s did not catch a store that %s; failed subtests: %q", want, defect, failed)
		}
	}
	if t.Failed() {
		t.Logf("child output:\n%s", out)
	}
}

// broken wraps a memstore and breaks one sentence of the contract.
type broken struct {
	inner  *memstore.Store
	defect string

	mu      sync.Mutex
	cache   map[string][]memtool.FileInfo // stale-listing: listings kept
	orphans map[string][]string           // hidden-orphans: name → its subtree, kept
	gone    map[string]bool               // remove-tombstone: names removed
	bufs    map[string][]byte             // shares-buffers: contents, not copied
}

func newBroken(defect string) *broken {
	for _, bs := range brokenStores {
		if bs.defect == defect {
			return &broken{inner: memstore.New(), defect: defect}
		}
	}
	panic("unknown defect " + defect)
}

var (
	_ memtool.Store       = (*broken)(nil)
	_ memtool.Renamer     = (*broken)(nil)
	_ memtool.RemoveAller = (*broken)(nil)
)

// window widens a race: the time between a check and the act that should
// have been one atomic step with it.
func window() { time.Sleep(time.Millisecond) }

// background drops cancellation, for the store that ignores it.
func (b *broken) ctx(ctx context.Context) context.Context {
	if b.defect == "ignores-cancel" {
		return context.Background()
	}
	return ctx
}

// plain turns error classes into bare strings, for the store whose errors
// do not match errors.Is.
func (b *broken) plain(err error) error {
	if b.defect == "plain-errors" && err != nil {
		return errors.New(err.Error())
	}
	return err
}

func (b *broken) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	fi, err := b.inner.Stat(b.ctx(ctx), name)
	if b.defect == "nil-for-missing" && errors.Is(err, memtool.ErrNotExist) {
		return memtool.FileInfo{}, nil
	}
	return fi, b.plain(err)
}

func (b *broken) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if data, ok := b.shared(name, nil); ok && int64(len(data)) <= limit {
		return data, nil
	}
	switch b.defect {
	case "ignores-limit":
		limit = 1 << 40
	case "no-is-dir":
		if fi, err := b.inner.Stat(ctx, name); err == nil && fi.IsDir() {
			return []byte{}, nil
		}
	}
	data, err := b.inner.ReadFile(b.ctx(ctx), name, limit)
	if err == nil {
		b.shared(name, data)
	}
	if b.defect == "nil-for-missing" && errors.Is(err, memtool.ErrNotExist) {
		return nil, nil
	}
	return data, b.plain(err)
}

func (b *broken) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cached, ok := b.cache[name]; ok {
		return slices.Clone(cached), nil
	}
	entries, err := b.inner.ReadDir(b.ctx(ctx), name)
	if err == nil && b.defect == "stale-listing" {
		if b.cache == nil {
			b.cache = map[string][]memtool.FileInfo{}
		}
		b.cache[name] = slices.Clone(entries)
	}
	switch {
	case err != nil:
		return nil, b.plain(err)
	case b.defect == "wrong-dir-entries":
		for i := range entries {
			entries[i].Size = 0
		}
	case b.defect == "shows-own-entries" && name == "":
		entries = append(entries, memtool.FileInfo{Name: ".store-lock"})
	}
	return entries, nil
}

func (b *broken) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	ctx = b.ctx(ctx)
	switch b.defect {
	case "create-replaces":
		if fi, err := b.inner.Stat(ctx, name); err == nil && !fi.IsDir() {
			mode = memtool.Replace
		}
	case "replaces-dirs":
		if fi, err := b.inner.Stat(ctx, name); err == nil && fi.IsDir() && mode == memtool.Replace {
			if err := b.inner.RemoveAll(ctx, name); err != nil {
				return err
			}
		}
	case "creates-parents":
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			b.inner.Mkdir(ctx, strings.Join(parts[:i], "/"))
		}
	case "create-racy":
		if mode == memtool.CreateOnly {
			if _, err := b.inner.Stat(ctx, name); err == nil {
				return &fs.PathError{Op: "write", Path: name, Err: memtool.ErrExist}
			}
			window()
			mode = memtool.Replace
		}
	case "torn-writes":
		if len(data) > 1 {
			if err := b.inner.WriteFile(ctx, name, data[:len(data)/2], mode); err != nil {
				return err
			}
			window()
			mode = memtool.Replace
		}
	}
	if b.defect == "replace-same-size-skipped" && mode == memtool.Replace {
		if fi, err := b.inner.Stat(ctx, name); err == nil && fi.IsRegular() && fi.Size == int64(len(data)) {
			return nil // "unchanged", judged by the size alone
		}
	}
	b.forget()
	if b.defect == "remove-tombstone" && mode == memtool.CreateOnly && b.removed(name) {
		return &fs.PathError{Op: "write", Path: name, Err: memtool.ErrExist}
	}
	return b.plain(b.inner.WriteFile(ctx, name, data, mode))
}

func (b *broken) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	ctx = b.ctx(ctx)
	switch b.defect {
	case "ignores-limit":
		limit = 1 << 40
	case "no-is-dir":
		if fi, err := b.inner.Stat(ctx, name); err == nil && fi.IsDir() {
			return nil
		}
	case "loses-updates", "writes-on-fn-error", "torn-writes":
		// Read, compute and write in three steps.
		old, err := b.inner.ReadFile(ctx, name, limit)
		if err != nil {
			return err
		}
		window()
		updated, fnErr := fn(old)
		if fnErr != nil && b.defect != "writes-on-fn-error" {
			return fnErr
		}
		if err := b.WriteFile(ctx, name, updated, memtool.Replace); err != nil {
			return err
		}
		return fnErr
	}
	var kept []byte
	err := b.inner.Update(ctx, name, limit, func(old []byte) ([]byte, error) {
		updated, err := fn(old)
		kept = updated
		return updated, err
	})
	if err == nil {
		b.forget()
		b.shared(name, kept)
	}
	if b.defect == "wraps-fn-error" && err != nil {
		return fmt.Errorf("update %s: %v", name, err)
	}
	return b.plain(err)
}

func (b *broken) Mkdir(ctx context.Context, name string) error {
	b.forget()
	if b.defect == "remove-tombstone" && b.removed(name) {
		return &fs.PathError{Op: "mkdir", Path: name, Err: memtool.ErrExist}
	}
	err := b.inner.Mkdir(b.ctx(ctx), name)
	b.unhide(ctx, name)
	if b.defect == "mkdir-existing-ok" && errors.Is(err, memtool.ErrExist) {
		return nil
	}
	return b.plain(err)
}

func (b *broken) Remove(ctx context.Context, name string) error {
	b.forgetAll()
	if b.defect == "remove-not-empty" {
		return b.inner.RemoveAll(b.ctx(ctx), name)
	}
	err := b.inner.Remove(b.ctx(ctx), name)
	if err == nil && b.defect == "remove-tombstone" {
		b.removed(name, true)
	}
	return b.plain(err)
}

func (b *broken) Rename(ctx context.Context, oldname, newname string) error {
	b.forgetAll()
	ctx = b.ctx(ctx)
	switch b.defect {
	case "rename-replaces":
		if _, err := b.inner.Stat(ctx, oldname); err == nil {
			b.inner.RemoveAll(ctx, newname)
		}
	case "rename-racy":
		if _, err := b.inner.Stat(ctx, newname); err == nil {
			return &fs.PathError{Op: "rename", Path: newname, Err: memtool.ErrExist}
		}
		window()
		if _, err := b.inner.Stat(ctx, oldname); err == nil {
			b.inner.RemoveAll(ctx, newname)
		}
	case "rename-copies":
		// Copies the file and forgets to remove the source.
		if data, err := b.inner.ReadFile(ctx, oldname, 1<<30); err == nil {
			return b.inner.WriteFile(ctx, newname, data, memtool.CreateOnly)
		}
		if err := b.inner.Mkdir(ctx, newname); err != nil {
			return err
		}
		return nil
	}
	b.hide(ctx, oldname)
	return b.plain(b.inner.Rename(ctx, oldname, newname))
}

func (b *broken) RemoveAll(ctx context.Context, name string) error {
	b.forgetAll()
	if b.defect == "removeall-prefix-range" {
		// Removes every top-level sibling whose name starts with name, as
		// an over-wide key range would.
		if !strings.Contains(name, "/") {
			if entries, err := b.inner.ReadDir(ctx, ""); err == nil {
				for _, e := range entries {
					if e.Name != name && strings.HasPrefix(e.Name, name) {
						b.inner.RemoveAll(ctx, e.Name)
					}
				}
			}
		}
	}
	if b.defect == "removeall-shallow" {
		// Removes only the directory's files, then fails quietly.
		entries, err := b.inner.ReadDir(ctx, name)
		if err != nil {
			return b.inner.Remove(ctx, name)
		}
		for _, e := range entries {
			if !e.IsDir() {
				b.inner.Remove(ctx, name+"/"+e.Name)
			}
		}
		b.inner.Remove(ctx, name)
		return nil
	}
	b.hide(ctx, name)
	return b.plain(b.inner.RemoveAll(b.ctx(ctx), name))
}

// closeCounter counts the calls of its Close.
type closeCounter struct{ closes int }

func (c *closeCounter) Close() error {
	c.closes++
	return nil
}

// TestOpened: Opened returns the store and closes it once, when the test
// ends; an error fails the test.
func TestOpened(t *testing.T) {
	if os.Getenv(brokenEnv) == "opened-error" {
		t.Run("Error", func(t *testing.T) { storetest.Opened(t, &closeCounter{}, errors.New("no store")) })
		return
	}
	c := &closeCounter{}
	t.Run("Open", func(t *testing.T) {
		if got := storetest.Opened(t, c, nil); got != c {
			t.Errorf("Opened returned %p, want %p", got, c)
		}
		if c.closes != 0 {
			t.Error("closed before the test ended")
		}
	})
	if c.closes != 1 {
		t.Errorf("closed %d times when the test ended, want once", c.closes)
	}
	checkCaught(t, "TestOpened", "opened-error", []string{"Error"})
}
