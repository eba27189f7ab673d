package stacktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/sqlitestore"
)

// The limits sit above history, so versions count against no quota. A
// model turned hostile (a prompt injection) can then fill the disk
// through history alone, each step within every limit: create a file as
// large as MaxFileSize, edit it (each edit keeps a version), delete it
// (one more) and start over under a new name. History's MaxBytes bounds
// what the versions of the store hold.
const (
	hostileFileSize = 500
	hostileMaxBytes = 6000
)

var hostileLimits = limits.Options{MaxFileSize: hostileFileSize, MaxFiles: 4, MaxBytes: 2 * hostileFileSize}

// hostileRound creates, edits three times and deletes the file p, all
// of them acknowledged: four versions of about hostileFileSize bytes. It
// may run outside the test's goroutine, so it reports and stops.
func hostileRound(t *testing.T, st *stack, p string) bool {
	t.Helper()
	cmds := []map[string]any{create(p, hostileText(0))}
	for i := 1; i <= 3; i++ {
		cmds = append(cmds, map[string]any{"command": "str_replace", "path": p, "old_str": fmt.Sprintf("v%d", i-1), "new_str": fmt.Sprintf("v%d", i)})
	}
	cmds = append(cmds, map[string]any{"command": "delete", "path": p})
	for _, cmd := range cmds {
		if res := st.run(t, cmd); res.IsError {
			t.Errorf("%v: %s", cmd, res.Text)
			return false
		}
	}
	return true
}

// hostileText is the file of hostileRound after its i'th edit.
func hostileText(i int) string {
	return fmt.Sprintf("v%d", i) + strings.Repeat("a", hostileFileSize-3)
}

// versionBytes adds up the sizes of the versions kept in below (the
// store under the history layer), and counts them.
func versionBytes(t *testing.T, below memtool.Store) (n int, size int64) {
	t.Helper()
	ctx := context.Background()
	dirs, err := below.ReadDir(ctx, history.DirName)
	if errors.Is(err, memtool.ErrNotExist) {
		return 0, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || d.Name == "trash" {
			continue
		}
		entries, err := below.ReadDir(ctx, path.Join(history.DirName, d.Name))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if isVersionName(e.Name) {
				n++
				size += e.Size
			}
		}
	}
	return n, size
}

func TestHostileLoopKeepsVersionsUnderMaxBytes(t *testing.T) {
	for name, base := range bases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			lim := hostileLimits
			st := newStack(t, base(), stackOptions{limits: &lim, history: &history.Options{MaxBytes: hostileMaxBytes}})
			const rounds = 12 // 48 versions, some 24,000 bytes unbounded
			for i := range rounds {
				if !hostileRound(t, st, fmt.Sprintf("/memories/f%d.md", i)) {
					t.FailNow()
				}
			}
			n, size := versionBytes(t, st.belowHistory)
			t.Logf("%d versions, %d bytes", n, size)
			if size > hostileMaxBytes {
				t.Errorf("the versions hold %d bytes, over MaxBytes %d", size, hostileMaxBytes)
			}
			// The newest versions stay: the last round's four, whole.
			last := fmt.Sprintf("/memories/f%d.md", rounds-1)
			vs, err := history.Versions(ctx, st.belowHistory, last)
			if err != nil || len(vs) != 4 {
				t.Fatalf("versions of %s: %v, %v; want its 4", last, vs, err)
			}
			got, err := history.Read(ctx, st.belowHistory, last, vs[3].N)
			if want := hostileText(3); err != nil || string(got) != want {
				t.Errorf("the newest version of %s: %.20q…, %v; want %.20q…", last, got, err, want)
			}
			// A version pruned is not found, and says so.
			first := "/memories/f0.md"
			if vs, err := history.Versions(ctx, st.belowHistory, first); err != nil || len(vs) != 0 {
				t.Errorf("versions of %s: %v, %v; want none left", first, vs, err)
			}
			err = history.Revert(ctx, st.top, st.belowHistory, first, 1)
			if !errors.Is(err, history.ErrNoVersion) {
				t.Errorf("revert of a pruned version: %v; want ErrNoVersion", err)
			}
		})
	}
}

// sharedBases opens one store twice, as two processes do: a directory
// and an SQLite file, and a PostgreSQL database as bases does.
func sharedBases(t *testing.T) map[string]func() (memtool.Store, memtool.Store) {
	m := map[string]func() (memtool.Store, memtool.Store){
		"filestore": func() (memtool.Store, memtool.Store) {
			dir := t.TempDir()
			open := func() memtool.Store {
				s, err := filestore.Open(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			return open(), open()
		},
		"sqlitestore": func() (memtool.Store, memtool.Store) {
			file := filepath.Join(t.TempDir(), "m.db")
			open := func() memtool.Store {
				s, err := sqlitestore.Open(file, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			return open(), open()
		},
	}
	if os.Getenv(pgtest.EnvVar) != "" || os.Getenv("CI") != "" { // under CI, a missing server fails
		m["pgstore"] = func() (memtool.Store, memtool.Store) {
			url := pgtest.URL(t)
			open := func() memtool.Store {
				s, err := pgstore.Open(context.Background(), url, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			return open(), open()
		}
	}
	return m
}

// Two processes, each with its own stack over one store, run the hostile
// loop at once: the versions may pass MaxBytes by no more than the
// documented margin, one version per process.
func TestHostileLoopsInTwoProcessesKeepMaxBytes(t *testing.T) {
	for name, open := range sharedBases(t) {
		t.Run(name, func(t *testing.T) {
			a, b := open()
			lim := hostileLimits
			lim.MaxFiles, lim.MaxBytes = 8, 4*hostileFileSize
			st1 := newStack(t, a, stackOptions{limits: &lim, history: &history.Options{MaxBytes: hostileMaxBytes}})
			st2 := newStack(t, b, stackOptions{limits: &lim, history: &history.Options{MaxBytes: hostileMaxBytes}, keys: []encrypt.Key{st1.key}})
			var wg sync.WaitGroup
			for i, st := range []*stack{st1, st2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 8 && hostileRound(t, st, fmt.Sprintf("/memories/p%d-%d.md", i, r)); r++ {
					}
				}()
			}
			wg.Wait()
			n, size := versionBytes(t, st1.belowHistory)
			t.Logf("%d versions, %d bytes", n, size)
			if margin := int64(2 * hostileFileSize); size > hostileMaxBytes+margin {
				t.Errorf("the versions hold %d bytes, over MaxBytes %d and the margin of one version per process", size, hostileMaxBytes)
			}
		})
	}
}
