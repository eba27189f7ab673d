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
