package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// lateStore makes its WriteFile's change only some time after its
// context ends, whatever that context says: a store past the point where
// it can stop (an fsync on a busy disk), as a shutdown cuts the
// requests' contexts off.
type lateStore struct {
	memtool.Store
	started chan struct{}
}

func (s lateStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	close(s.started)
	<-ctx.Done()
	time.Sleep(1500 * time.Millisecond) // longer than answerGrace (0.75 s here), within the shutdown's 3 s left
	return s.Store.WriteFile(context.WithoutCancel(ctx), name, data, mode)
}

// A change that a shutdown's cut-off did not stop, and that the store
// made before the shutdown gave up on its request, is answered: its
// client learns it was made. Before, the answer's write deadline was set
// a short grace after the request's context ended, however long the
// change still took, so that the answer to a change made (and logged
// 200, outcome ok) was cut off, and the client saw a failure.
func TestShutdownAnswersLateChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, tok := f.key(t, "alice", keys.Write)
	store := memstore.New()
	started := make(chan struct{})
	srv, err := server.New(server.Config{Keys: f.ring, ShutdownTimeout: 12 * time.Second,
		Logger: slog.New(slog.DiscardHandler),
		Open:   func(context.Context, string) (memtool.Store, error) { return lateStore{store, started}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := listen(t, srv, "", "")
	answered := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/memory", strings.NewReader(fmt.Sprintf(create, "alice")))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- fmt.Sprintf("%d %s %v", resp.StatusCode, b, err)
	}()
	<-started
	stop()
	got := <-answered
	if _, err := store.Stat(context.Background(), "notes.md"); err != nil {
		t.Fatalf("the change was not made: %v", err)
	}
	if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "File created") || !strings.HasSuffix(got, "<nil>") {
		t.Errorf("the answer to a change made: %s", got)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
