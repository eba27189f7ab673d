package memtool_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// panicky is a store with a bug: WriteFile panics after writing, and
// ReadDir panics before reading.
type panicky struct{ memtool.Store }

func (p panicky) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := p.Store.WriteFile(ctx, name, data, mode); err != nil {
		return err
	}
	panic("a bug in a store")
}

func (p panicky) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	panic("a bug in a store")
}

// A store that panics ends one command, not the process: Memory answers
// that command with an error that does not claim nothing changed (the
// panic may come after the change), logs the panic with its stack, and
// keeps serving, its lock released.
func TestStorePanicAnswersTheCommand(t *testing.T) {
	var logged bytes.Buffer
	mem := memtool.New(panicky{memstore.New()}, &memtool.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	ctx := context.Background()

	r := mem.Run(ctx, []byte(`{"command":"create","path":"/memories/a.md","file_text":"x"}`))
	want := "The create command on /memories/a.md failed inside memtool (an internal error); it may or may not have been made. View /memories/a.md before trying again"
	if !r.IsError || r.Text != "Error: "+want {
		t.Errorf("create on a store that panics after writing: %+v, want the error %q", r, want)
	}
	if !strings.Contains(logged.String(), "a bug in a store") || !strings.Contains(logged.String(), "panic_test.go") {
		t.Errorf("the panic and its stack were not logged: %q", logged.String())
	}

	r = mem.Run(ctx, []byte(`{"command":"view","path":"/memories"}`))
	if !r.IsError || r.Text != "Error: Internal error while running view on /memories" {
		t.Errorf("view on a store that panics: %+v", r)
	}

	// Memory's lock is free: a rename, which this store (no Renamer) runs
	// by copying while it holds the lock alone, gets it, and answers (its
	// copy's WriteFile panics too), and an edit runs.
	renamed := make(chan memtool.Result, 1)
	go func() {
		renamed <- mem.Run(ctx, []byte(`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/b.md"}`))
	}()
	select {
	case r := <-renamed:
		if !strings.Contains(r.Text, "failed inside memtool") {
			t.Errorf("rename after the panics: %+v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a rename after the panics has waited 30 s for Memory's lock")
	}
	r = mem.Run(ctx, []byte(`{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"y"}`))
	if r.IsError {
		t.Errorf("str_replace after the panics: %+v", r)
	}
}
