package filestore_test

import (
	"context"
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
			answerWaits(t, func(ctx context.Context, s *filestore.Store) error {
				return s.Mkdir(ctx, "d")
			}, "d/f", c.see, c.want)
		})
	}
}
