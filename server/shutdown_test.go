package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// startedStore is a stuckStore that says when a write under slow/ begins.
type startedStore struct {
	stuckStore
	started chan struct{}
	once    *sync.Once
}

func (s startedStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if strings.HasPrefix(name, "slow/") {
		s.once.Do(func() { close(s.started) })
	}
	return s.stuckStore.WriteFile(ctx, name, data, mode)
}

// A turn still running as a shutdown's time runs out is cut off in time
// to answer, as one is before the write deadline: the client reads the
// answer of every call, the unfinished ones as errors, instead of the
// connection closing with no answer after some of the changes were made;
// and the shutdown ends with every request answered.
func TestShutdownAnswersALongTurn(t *testing.T) {
	f := newFixture(t, nil)
	_, tok := f.key(t, "alice", keys.Write)
	store := startedStore{stuckStore{memstore.New()}, make(chan struct{}), new(sync.Once)}
	store.Mkdir(context.Background(), "slow")
	srv, err := server.New(server.Config{Keys: f.ring, CallTimeout: time.Minute, ShutdownTimeout: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler),
		Open:   func(context.Context, string) (memtool.Store, error) { return store, nil }})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := listen(t, srv, "", "")
	body := `[{"command":"create","path":"/memories/made.md","file_text":"x"},` +
		`{"command":"create","path":"/memories/slow/never.md","file_text":"x"}]`
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/memory", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, b, err}
	}()
	<-store.started
	stop()
	a := <-answered
	var results []struct {
		IsError bool `json:"is_error"`
	}
	if a.err != nil || a.status != 200 || json.Unmarshal(a.body, &results) != nil || len(results) != 2 {
		t.Fatalf("the turn running past the shutdown's time: %d %s %v; want 200 and 2 answers", a.status, a.body, a.err)
	}
	if results[0].IsError || !results[1].IsError {
		t.Errorf("answers %s: want the first made, the stuck one an error", a.body)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v, want nil: every request was answered", err)
	}
}
