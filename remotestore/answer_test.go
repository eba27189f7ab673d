package remotestore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
)

// withFile returns a memstore holding f.md with content, and the
// resource API over it.
func withFile(t *testing.T, content string) (*memstore.Store, http.Handler) {
	t.Helper()
	inner := memstore.New()
	if err := inner.WriteFile(t.Context(), "f.md", []byte(content), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	return inner, remotetest.Handler(inner, "")
}

func open(t testing.TB, h http.Handler, opts *remotestore.Options) *remotestore.Store {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s, err := remotestore.Open(srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCutAnswerIsNoContent: a read whose answer ends early without the
// client's transport noticing (a proxy that closes a connection with no
// length given, the end of the body unmarked) fails, and an Update does
// not write its edit of the cut content over the file.
func TestCutAnswerIsNoContent(t *testing.T) {
	const content = "line one\nline two\nline three\n"
	inner, api := withFile(t, content)
	cut := cutAnswers(t, api, func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/v1/file" })
	s := open(t, cut, nil)
	if data, err := s.ReadFile(t.Context(), "f.md", 1000); err == nil {
		t.Errorf("ReadFile of a cut answer = %q, nil", data)
	}
	err := s.Update(t.Context(), "f.md", 1000, func(old []byte) ([]byte, error) { return append(old, "line four\n"...), nil })
	if err == nil {
		t.Errorf("Update after a cut answer = nil")
	}
	if data, _ := inner.ReadFile(t.Context(), "f.md", 1000); string(data) != content {
		t.Fatalf("the file holds %q, want %q", data, content)
	}
}

// TestPageIsNoAnswer: a success that is not the API's answer (a proxy's
// or another site's page, answered 200 without a redirect) is no
// success: a read never returns the page as the file's content, and a
// change the page answers was not made, so it fails.
func TestPageIsNoAnswer(t *testing.T) {
	ctx := t.Context()
	inner, api := withFile(t, "old")
	inner.Mkdir(ctx, "d")
	page := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>Please sign in</html>"))
	}
	t.Run("read", func(t *testing.T) {
		s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { page(w) }), nil)
		if data, err := s.ReadFile(ctx, "f.md", 100); err == nil {
			t.Errorf("ReadFile = %q, nil", data)
		}
	})
	t.Run("change", func(t *testing.T) {
		s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				api.ServeHTTP(w, r)
				return
			}
			page(w)
		}), &remotestore.Options{MaxUpdateTries: 2})
		if err := s.WriteFile(ctx, "f.md", []byte("new"), memtool.Replace); err == nil {
			t.Errorf("WriteFile = nil")
		}
		if err := s.WriteFile(ctx, "g.md", []byte("new"), memtool.CreateOnly); err == nil {
			t.Errorf("WriteFile(CreateOnly) = nil")
		}
		if err := s.Update(ctx, "f.md", 100, func([]byte) ([]byte, error) { return []byte("new"), nil }); err == nil {
			t.Errorf("Update = nil")
		}
		if err := s.Remove(ctx, "f.md"); err == nil {
			t.Errorf("Remove = nil")
		}
		if err := s.RemoveAll(ctx, "d"); err == nil {
			t.Errorf("RemoveAll = nil")
		}
		if err := s.Mkdir(ctx, "e"); err == nil {
			t.Errorf("Mkdir = nil")
		}
		if err := s.Rename(ctx, "f.md", "h.md"); err == nil {
			t.Errorf("Rename = nil")
		}
		if entries, _ := inner.ReadDir(ctx, ""); len(entries) != 2 {
			t.Errorf("the store holds %v", entries)
		}
	})
}

// TestNotModifiedIsNoContent: a 304 to a read that named no ETag is not
// an empty file.
func TestNotModifiedIsNoContent(t *testing.T) {
	_, api := withFile(t, "content")
	s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		w.Header().Set("ETag", rec.Header().Get("ETag"))
		w.WriteHeader(http.StatusNotModified)
	}), nil)
	if data, err := s.ReadFile(t.Context(), "f.md", 100); err == nil {
		t.Errorf("ReadFile = %q, nil", data)
	}
}

// TestEndlessAnswer: a read takes no more of an answer than the limit
// asked for: an answer larger than that is ErrTooLarge at once, not read
// to its end.
func TestEndlessAnswer(t *testing.T) {
	s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(make([]byte, 4096))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // and never ends
	}), &remotestore.Options{Timeout: 5 * time.Second})
	if _, err := s.ReadFile(t.Context(), "f.md", 100); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("ReadFile = %v, want ErrTooLarge", err)
	}
}

// TestHostileNames: a directory's entries from the server are base names,
// or the answer is malformed: a name such as ".." or "a/b" would take a
// caller (Walk, a copy to another store) out of the directory it lists,
// or back into it for ever.
func TestHostileNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "../x", "a\x00b"} {
		s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(resource.Listing{Path: "/memories/d", Entries: []resource.Entry{{Name: "ok", Type: "file"}, {Name: name, Type: "dir"}}})
		}), nil)
		if entries, err := s.ReadDir(t.Context(), "d"); err == nil {
			t.Errorf("an entry named %q: ReadDir = %v, nil", name, entries)
		}
	}
}

// cutAnswers is api, except that a request that cut picks is run by api
// in full and answered with its status, Content-Type and ETag and half of
// its body, over HTTP/1.1 without Content-Length or chunking, so that the
// body ends where the connection does, as a proxy cut off may answer.
func cutAnswers(t *testing.T, api http.Handler, cut func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cut(r) {
			api.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		body := rec.Body.Bytes()
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nETag: %s\r\nConnection: close\r\n\r\n",
			rec.Code, http.StatusText(rec.Code), rec.Header().Get("Content-Type"), rec.Header().Get("ETag"))
		buf.Write(body[:len(body)/2])
		buf.Flush()
	})
}

// madeThen is api, except that a change (any request but a GET) is run
// by api, its answer dropped, and answered by answer instead: a proxy
// that forwarded it and then answered on its own.
func madeThen(api http.Handler, answer func(w http.ResponseWriter)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			api.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(httptest.NewRecorder(), r) // made
		answer(w)
	})
}
