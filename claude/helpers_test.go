package claude_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/testpng"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// newFileMemory returns a Memory over a real file store in a temporary
// directory.
func newFileMemory(t *testing.T) (*memtool.Memory, *filestore.Store) {
	t.Helper()
	store, err := filestore.Open(t.TempDir(), nil)
	storetest.Opened(t, store, err)
	return memtool.New(store, nil), store
}

// newMemory returns a Memory over a new in-memory store.
func newMemory() *memtool.Memory { return memtool.New(memstore.New(), nil) }

// A fixture is a Memory over a file store that holds pic.png, a real PNG
// image, and a fake API, with a client for it, that answers from a script.
type fixture struct {
	mem    *memtool.Memory
	store  *filestore.Store
	pic    []byte
	srv    *claudetest.Server
	client anthropic.Client
}

func newFixture(t *testing.T, script []claudetest.Turn) *fixture {
	t.Helper()
	mem, store := newFileMemory(t)
	pic := pngBytes(t)
	if err := store.WriteFile(context.Background(), "pic.png", pic, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	srv := claudetest.NewServer(script...)
	t.Cleanup(srv.Close)
	return &fixture{mem: mem, store: store, pic: pic, srv: srv, client: srv.Client()}
}

// pngBytes returns a small, real PNG image.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	return testpng.PNG()
}

// checkResults checks that reqs[i] carries exactly the tool results
// want[i], as wire JSON, and that none doubles memtool's "Error: " prefix.
func checkResults(t *testing.T, reqs []claudetest.Request, want map[int][]string) {
	t.Helper()
	for i, wantResults := range want {
		got := reqs[i].ToolResults()
		if len(got) != len(wantResults) {
			t.Errorf("request %d: %d tool results, want %d", i+1, len(got), len(wantResults))
			continue
		}
		for k, w := range wantResults {
			if !claudetest.JSONEqual(t, got[k].Raw, w) {
				t.Errorf("request %d, result %d:\n got %s\nwant %s", i+1, k+1, got[k].Raw, w)
			}
			if strings.Contains(got[k].Text, "Error: Error:") {
				t.Errorf("request %d, result %d: doubled prefix: %q", i+1, k+1, got[k].Text)
			}
		}
	}
}

// textResult is the wire JSON of a successful text tool_result as the SDK
// runner sends it.
func textResult(id, text string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "tool_result", "tool_use_id": id,
		"content": []any{map[string]any{"type": "text", "text": text}},
	})
	return string(b)
}

// errorResult is the wire JSON of a failed tool_result.
func errorResult(id, text string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "tool_result", "tool_use_id": id, "is_error": true,
		"content": []any{map[string]any{"type": "text", "text": text}},
	})
	return string(b)
}

// imageResult is the wire JSON of an image tool_result.
func imageResult(id, mediaType, b64 string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "tool_result", "tool_use_id": id,
		"content": []any{map[string]any{"type": "image", "source": map[string]any{
			"type": "base64", "media_type": mediaType, "data": b64,
		}}},
	})
	return string(b)
}
