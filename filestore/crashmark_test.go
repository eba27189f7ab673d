package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// A writer killed holding the lock leaves its mark in the lock file. A
// store that was already open in another process, writing next, must not
// clear that mark: the dead writer's leftovers are then swept by the next
// Open, as the package promises, instead of staying for good (hidden, and
// keeping their directory from being removed).
func TestCrashMarkSurvivesLiveWriter(t *testing.T) {
	beMarkingChild("FILESTORE_MARK_CHILD")
	dir := t.TempDir()
	live := open(t, dir, nil) // opened before the crash: its Open swept nothing
	ctx := t.Context()
	if err := live.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := live.WriteFile(ctx, "f", []byte("0"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	cmd, line, err := startChild(t, "TestCrashMarkSurvivesLiveWriter", "FILESTORE_MARK_CHILD="+dir)
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said %q (%v)", line, err)
	}
	// What the child would leave if killed between creating its temp file
	// and renaming it.
	debris := filepath.Join(dir, "d", ".memtool-tmp-0123456789abcdef")
	writeHostFile(t, debris, "debris")
	cmd.Process.Kill()
	cmd.Wait()
	if got := hostContent(t, filepath.Join(dir, ".memtool.lock")); got != "dirty\n" {
		t.Fatalf("the killed writer left the lock file holding %q, want its mark", got)
	}

	if err := live.WriteFile(ctx, "g", []byte("1"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	open(t, dir, nil)
	if _, err := os.Lstat(debris); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed writer's temp file was not swept by the next Open (lstat: %v)", err)
	}
	if err := live.Remove(ctx, "d"); err != nil {
		t.Errorf("Remove of the directory that held only debris: %v", err)
	}
}

// The first writer of a directory makes the lock file to mark it. Killed
// mid-change, it leaves its mark there, and the next Open (a read's)
// sweeps its leftovers and clears the mark, though no lock file existed
// when the directory was opened before (by a reader, which makes none).
func TestFirstWriterKilledIsSwept(t *testing.T) {
	beMarkingChild("FILESTORE_FIRST_CHILD")
	dir := t.TempDir()
	writeHostFile(t, filepath.Join(dir, "f"), "0")
	reader := open(t, dir, nil)
	if _, err := reader.ReadDir(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, ".memtool.lock")
	if _, err := os.Lstat(lockPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a reader made the lock file (lstat: %v): this test no longer checks the first writer", err)
	}
	cmd, line, err := startChild(t, "TestFirstWriterKilledIsSwept", "FILESTORE_FIRST_CHILD="+dir)
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said %q (%v)", line, err)
	}
	debris := filepath.Join(dir, ".memtool-tmp-0123456789abcdef")
	writeHostFile(t, debris, "debris")
	// Opened while the writer lives: its mark is its own, nothing is swept.
	open(t, dir, nil)
	if _, err := os.Lstat(debris); err != nil {
		t.Fatalf("an Open while the writer held the lock swept its temp file (lstat: %v)", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := hostContent(t, lockPath); got != "dirty\n" {
		t.Fatalf("the killed first writer left the lock file holding %q, want its mark", got)
	}
	r := open(t, dir, nil)
	if _, err := os.Lstat(debris); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed writer's temp file was not swept by the next Open (lstat: %v)", err)
	}
	if got := hostContent(t, lockPath); got != "clean\n" {
		t.Errorf("the lock file after the sweep holds %q, want the clean mark", got)
	}
	if entries, err := r.ReadDir(t.Context(), ""); err != nil || len(entries) != 1 || entries[0].Name != "f" {
		t.Errorf("ReadDir after the sweep = %v, %v; want f alone", names(entries), err)
	}
}

// beMarkingChild returns unless this process is the child that the test
// env names starts; the child runs an Update that marks the lock file from
// its read on, says "locked" and waits to be killed.
func beMarkingChild(env string) {
	if s := childStore(env); s != nil {
		filestore.NoStage(s)
		s.Update(context.Background(), "f", 100, func(old []byte) ([]byte, error) {
			fmt.Println("locked")
			select {}
		})
		os.Exit(1)
	}
}
