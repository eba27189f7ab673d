package remotestore_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
)

// h2Resetter is an HTTP/2 peer (cleartext, prior knowledge) that takes
// each request whole, as a server that makes the change would, and
// resets the first stream with PROTOCOL_ERROR, as a proxy may after it
// forwarded the request; later requests are answered 404 not_found.
func h2Resetter(t *testing.T, requests *atomic.Int32) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go serveH2(conn, requests)
		}
	}()
	return "http://" + l.Addr().String()
}

func serveH2(conn net.Conn, requests *atomic.Int32) {
	defer conn.Close()
	if _, err := io.ReadFull(conn, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(conn, conn)
	fr.WriteSettings()
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			fr.WriteSettingsAck()
		}
		if !f.Header().Flags.Has(http2.FlagDataEndStream) || (f.Header().Type != http2.FrameHeaders && f.Header().Type != http2.FrameData) {
			continue // the request is not whole yet
		}
		id := f.Header().StreamID
		if requests.Add(1) == 1 {
			fr.WriteRSTStream(id, http2.ErrCodeProtocol)
			continue
		}
		body := []byte(`{"error":{"code":"not_found","message":"file does not exist"}}`)
		hbuf.Reset()
		enc.WriteField(hpack.HeaderField{Name: ":status", Value: "404"})
		enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/json"})
		enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true})
		fr.WriteData(id, true, body)
	}
}

// TestHTTP2ResetAfterSending: over HTTP/2, a change whose stream the peer
// resets after taking the request whole is not sent again (Go's
// transport retries a request after a reset with PROTOCOL_ERROR when it
// can replay the body): it may have been made, so it fails with
// ErrOutcomeUnknown, and never with the second try's answer (not_found
// for a file the first one removed).
func TestHTTP2ResetAfterSending(t *testing.T) {
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int32
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetUnencryptedHTTP2(true)
			defer tr.CloseIdleConnections()
			s, err := remotestore.Open(h2Resetter(t, &requests), &remotestore.Options{Client: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			err = c.do(t.Context(), s)
			if c.name == "Update" {
				return // its read was reset: nothing to change
			}
			if !errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("%s = %v; want ErrOutcomeUnknown", c.name, err)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("the change was sent %d times", n)
			}
		})
	}
}
