package resource_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/secrets"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// A PUT's answer names the file's ETag, size and SHA-256 only when they
// are the file's: over a store that may keep other bytes than it was sent
// (secrets redacting a token), Options.WritesMayChange leaves them out,
// and the ETag a read gives is the stored content's, which a
// compare-and-swap then matches. An empty file's size is still given.
func TestWriteAnswerOnlyWhatIsKept(t *testing.T) {
	token := "token ghp_" + strings.Repeat("a1B2", 9) + "\n"
	for _, mayChange := range []bool{false, true} {
		store := secrets.New(memstore.New(), &secrets.Options{Policy: secrets.Redact})
		srv := serveStore(t, store, true, &resource.Options{WritesMayChange: mayChange})

		resp := put(t, srv, "/memories/t.md", token, nil)
		answer := string(wantStatus(t, resp, http.StatusOK))
		kept := storetest.ReadText(t, store, "t.md")
		if kept == token {
			t.Fatalf("the secrets policy kept the token: %q", kept)
		}
		etag := resp.Header.Get("ETag")
		switch {
		case mayChange && (etag != "" || strings.Contains(answer, "sha256") || strings.Contains(answer, "size")):
			t.Errorf("WritesMayChange: the answer names what was sent, not what was kept: ETag %q, %s", etag, answer)
		case !mayChange && etag != resource.ETag([]byte(token)):
			t.Errorf("ETag %q, want the body's", etag)
		}

		got := mustDo(t, srv, "GET", "/v1/file"+p("/memories/t.md"), nil, nil)
		wantStatus(t, got, http.StatusOK)
		if tag := got.Header.Get("ETag"); tag != resource.ETag([]byte(kept)) {
			t.Fatalf("GET's ETag %q is not the kept content's", tag)
		}
		swap := put(t, srv, "/memories/t.md", "clean\n", http.Header{"If-Match": {got.Header.Get("ETag")}})
		wantStatus(t, swap, http.StatusOK)
		if s := storetest.ReadText(t, store, "t.md"); s != "clean\n" {
			t.Fatalf("after the compare-and-swap the file holds %q", s)
		}

		empty := string(wantStatus(t, put(t, srv, "/memories/empty.md", "", nil), http.StatusOK))
		if !mayChange && !strings.Contains(empty, `"size":0`) {
			t.Errorf("the answer to writing an empty file gives no size: %s", empty)
		}
	}
}

// A PUT whose body ends before its declared length (a client that hung
// up) writes nothing and is the client's failure, 400, not an internal
// error logged as one.
func TestShortBodyIsClientError(t *testing.T) {
	var log bytes.Buffer
	store := memstore.New()
	srv := serveStore(t, store, true, &resource.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /v1/file?path=/memories/cut.md HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b")
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a guard against a hang only
	answer, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") {
		t.Errorf("answer to a cut body: %.200q, want 400", answer)
	}
	if strings.Contains(log.String(), "ERROR") {
		t.Errorf("a cut body was logged as an error: %s", log.String())
	}
	if _, err := store.Stat(t.Context(), "cut.md"); err == nil {
		t.Error("a cut body was written")
	}
}
