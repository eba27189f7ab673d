package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestReadBodyAllocatesWhatArrives: a request that declares a large body
// (up to the limit) and sends a few bytes makes readBody allocate about
// what arrived, not what was declared; a small declared body is still
// read into one buffer of its size.
func TestReadBodyAllocatesWhatArrives(t *testing.T) {
	const declared = 64 << 20
	r := httptest.NewRequest(http.MethodPost, "/v1/memory", io.MultiReader(strings.NewReader(`{"command":`), errReader{}))
	r.ContentLength = declared
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readBody(httptest.NewRecorder(), r, declared)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("readBody of a body cut short succeeded")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("readBody allocated %d bytes for a body of 11 bytes that declared %d", grew, declared)
	}

	small := `{"command":"view","path":"/memories"}`
	r = httptest.NewRequest(http.MethodPost, "/v1/memory", strings.NewReader(small))
	got, err := readBody(httptest.NewRecorder(), r, declared)
	if err != nil || string(got) != small || cap(got) != len(small) {
		t.Fatalf("readBody of a small body: %q (cap %d), %v", got, cap(got), err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
