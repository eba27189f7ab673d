package filestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
)

// More answers that rest on what a write of the same store changed while
// its directory fsync is under way (see TestAnswerWaitsForWhatItSaw): an
// Update that finds the new content too large and writes nothing, a
// Remove that finds the directory holding the new file not empty, a write
// or mkdir below the new file finding it is not a directory. Each returns
// only once the fsync is done.
func TestMoreAnswersWaitForWhatTheySaw(t *testing.T) {
	answerWaits(t, mkdirAt("d"), "d/f", []sighting{
		{"Update finding it too large", func(ctx context.Context, s *filestore.Store) error {
			return s.Update(ctx, "d/f", 2, func(old []byte) ([]byte, error) { return old, nil })
		}, memtool.ErrTooLarge},
		{"remove of its directory", func(ctx context.Context, s *filestore.Store) error {
			return s.Remove(ctx, "d")
		}, memtool.ErrNotEmpty},
		{"write below it", createAt("d/f/x"), memtool.ErrNotDir},
		{"mkdir below it", mkdirAt("d/f/x"), memtool.ErrNotDir},
	})
}

// An Update of a link in the store's directory to d/f reads d/f. What it
// reads may be a write to d whose fsync is under way, which the fsync of
// the link's own directory does not cover: an Update that writes nothing
// answers once that fsync is done, and one that writes (through the link,
// into d) waits for an fsync of d that starts after the one under way, so
// that no acknowledged change rests on one a crash may undo.
func TestUpdateThroughLinkWaitsForWhatItRead(t *testing.T) {
	linked := func(ctx context.Context, s *filestore.Store) error {
		if err := s.Mkdir(ctx, "d"); err != nil {
			return err
		}
		return os.Symlink("d/f", filepath.Join(s.Dir(), "l"))
	}
	answerWaits(t, linked, "d/f", []sighting{
		{"unchanged Update through the link", func(ctx context.Context, s *filestore.Store) error {
			return s.Update(ctx, "l", 100, func(old []byte) ([]byte, error) {
				if string(old) != "new" {
					return nil, fmt.Errorf("read %q", old)
				}
				return old, nil
			})
		}, nil},
	})

	s := open(t, t.TempDir(), nil)
	ctx := t.Context()
	must.Succeed(t, linked(ctx, s))
	release, blocked := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{}, 3)
	var first atomic.Bool // not a sync.Once, whose later calls wait for the first
	filestore.SetHooks(s, filestore.Hooks{
		DirSync: func() {
			if first.CompareAndSwap(false, true) {
				close(blocked)
				<-release
			}
		},
		Waiting: func() { waiting <- struct{}{} },
	})
	written := make(chan error, 1)
	go func() { written <- s.WriteFile(ctx, "d/f", []byte("new"), memtool.CreateOnly) }()
	<-blocked
	<-waiting // the writer's own
	updated := make(chan error, 1)
	go func() {
		updated <- s.Update(ctx, "l", 100, func(old []byte) ([]byte, error) { return append(old, '!'), nil })
	}()
	for range 1 { // its own fsync's, of d, which covers the writer's rename
		select {
		case <-waiting:
		case err := <-updated:
			t.Errorf("the Update answered (%v) while the fsync of what it read was under way", err)
			updated <- err
		}
	}
	close(release)
	must.Succeed(t, <-written)
	must.Succeed(t, <-updated)
	for _, name := range []string{"l", "d/f"} { // written through the link
		if data, err := s.ReadFile(ctx, name, 100); err != nil || string(data) != "new!" {
			t.Errorf("%s = %q, %v", name, data, err)
		}
	}
}
