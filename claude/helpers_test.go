package claude_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"reflect"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/filestore"
)

// newFileMemory returns a Memory over a real file store in a temporary
// directory.
func newFileMemory(t *testing.T) (*memtool.Memory, *filestore.Store) {
	t.Helper()
	store, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return memtool.New(store, nil), store
}

// pngBytes returns a small, real PNG image.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readFile returns a file's content from the store, or fails the test.
func readFile(t *testing.T, store memtool.Store, name string) string {
	t.Helper()
	data, err := store.ReadFile(context.Background(), name, 1<<20)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(data)
}

// sameJSON reports whether two JSON texts hold the same value, whatever the
// key order.
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

// noProblems fails the test if the fake refused any request.
func noProblems(t *testing.T, srv *claudetest.Server) {
	t.Helper()
	for i, r := range srv.Requests() {
		if r.Problem != "" {
			t.Errorf("request %d refused by the fake: %s", i+1, r.Problem)
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
