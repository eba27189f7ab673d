package filestore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// More answers that rest on what a write of the same store changed while
// its directory fsync is under way (see TestAnswerWaitsForWhatItSaw): an
// Update that finds the new content too large and writes nothing, a
// Remove that finds the directory holding the new file not empty, a write
// or mkdir below the new file finding it is not a directory. Each returns
// only once the fsync is done.
func TestMoreAnswersWaitForWhatTheySaw(t *testing.T) {
	for _, c := range []struct {
		name string
		see  func(ctx context.Context, s *filestore.Store) error
		want error
	}{
		{"Update finding it too large", func(ctx context.Context, s *filestore.Store) error {
			return s.Update(ctx, "d/f", 2, func(old []byte) ([]byte, error) { return old, nil })
		}, memtool.ErrTooLarge},
		{"remove of its directory", func(ctx context.Context, s *filestore.Store) error {
			return s.Remove(ctx, "d")
		}, memtool.ErrNotEmpty},
		{"write below it", func(ctx context.Context, s *filestore.Store) error {
			return s.WriteFile(ctx, "d/f/x", nil, memtool.CreateOnly)
		}, memtool.ErrNotDir},
		{"mkdir below it", func(ctx context.Context, s *filestore.Store) error {
			return s.Mkdir(ctx, "d/f/x")
		}, memtool.ErrNotDir},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, nil)
			ctx := t.Context()
			if err := s.Mkdir(ctx, "d"); err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			blocked := make(chan struct{})
			waiting := make(chan struct{}, 2)
			var once sync.Once
			filestore.SetHooks(s, filestore.Hooks{
				DirSync: func() { once.Do(func() { close(blocked); <-release }) },
				Waiting: func() { waiting <- struct{}{} },
			})
			written := make(chan error, 1)
			go func() { written <- s.WriteFile(ctx, "d/f", []byte("new"), memtool.CreateOnly) }()
			<-blocked
			<-waiting // the writer's own
			seen := make(chan error, 1)
			go func() { seen <- c.see(ctx, s) }()
			select {
			case <-waiting:
			case err := <-seen:
				t.Errorf("answered (%v) while the fsync of the write it saw was under way", err)
				seen <- err
			}
			close(release)
			if err := <-written; err != nil {
				t.Fatal(err)
			}
			if err := <-seen; !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
}
