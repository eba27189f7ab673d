package limits_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/memstore"
)

// A directory that cannot be made for another reason than the quota (its
// parent is a file, or missing) gets that reason, not "Limit exceeded", even with the
// store at MaxFiles: the model is told what to fix.
func TestMkdirBesideFileAtQuotaSaysWhy(t *testing.T) {
	ctx := context.Background()
	s := limits.New(memstore.New(), &limits.Options{MaxFiles: 1})
	if err := s.WriteFile(ctx, "f", []byte("one"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	err := s.Mkdir(ctx, "f/d")
	var le *limits.Error
	if errors.As(err, &le) || !errors.Is(err, memtool.ErrNotDir) {
		t.Errorf("Mkdir under a file at MaxFiles: %v, want ErrNotDir", err)
	}
	if err := s.Mkdir(ctx, "g/d"); errors.As(err, &le) || !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Mkdir under a missing directory at MaxFiles: %v, want ErrNotExist", err)
	}
	if err := s.Mkdir(ctx, "d"); !errors.As(err, &le) {
		t.Errorf("Mkdir of a new directory at MaxFiles: %v, want the limit", err)
	}
}
