package memtool_test

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// A command whose deadline passed before it started is answered as one
// that did not finish in time (as exec's --timeout promises), one whose
// context was cancelled as cancelled; neither changes anything.
func TestExpiredBeforeStart(t *testing.T) {
	s := memstore.New()
	mem := memtool.New(s, nil)
	in := []byte(`{"command":"create","path":"/memories/a.md","file_text":"x"}`)
	late, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if r := mem.Run(late, in); !r.IsError || r.Text != "Error: The create command on /memories/a.md did not finish in time (it had not started); nothing was changed" {
		t.Errorf("past deadline: %q", r.Text)
	}
	gone, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if r := mem.Run(gone, in); !r.IsError || r.Text != "Error: The create command was cancelled before it ran" {
		t.Errorf("cancelled: %q", r.Text)
	}
	if _, err := s.Stat(context.Background(), "a.md"); err == nil {
		t.Error("a.md was created")
	}
}
