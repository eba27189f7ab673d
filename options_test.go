package memtool_test

import (
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// Memory.Options gives the options a Memory runs with: those given, and
// the defaults for the rest.
func TestMemoryOptions(t *testing.T) {
	got := memtool.New(memstore.New(), &memtool.Options{Overwrite: true, MaxFileSize: 10}).Options()
	if !got.Overwrite || got.MaxFileSize != 10 || got.MaxReadSize != memtool.DefaultMaxReadSize || got.MaxViewChars != memtool.DefaultMaxViewChars ||
		got.MaxImageSize != memtool.DefaultMaxImageSize || got.Logger == nil {
		t.Errorf("Options() = %+v", got)
	}
	if memtool.New(memstore.New(), nil).Options().Overwrite {
		t.Error("Overwrite on by default")
	}
}
