package pgstore_test

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// A proxy forwards TCP connections from a port of 127.0.0.1 to the
// server, and can stop forwarding (freeze) and start again (resume), as a
// stopped server or a broken network does: connections are accepted, and
// nothing goes through, not even their closing.
type proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	closed bool
	// trigger, when set, freezes the proxy as soon as it has forwarded
	// bytes to the server that hold it.
	trigger []byte
	conns   []net.Conn
	wg      sync.WaitGroup
	// flights counts the round trips of all connections: each time a
	// connection's client sends after the server last sent, the client has
	// waited for an answer and a new round trip begins.
	flights int
}

// exchange is the state of one connection that flights counts: whether
// its client sent last.
type exchange struct{ clientLast bool }

// startProxy starts a proxy to the server of the URL rawURL, and returns
// it and the same URL through the proxy. It stops when the test ends.
func startProxy(t *testing.T, rawURL string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.target, 10*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		x := new(exchange)
		p.wg.Go(func() { p.pipe(s, c, true, x) })
		p.wg.Go(func() { p.pipe(c, s, false, x) })
	}
}

// pipe copies src to dst, and then closes both, each step once the proxy
// is not frozen.
func (p *proxy) pipe(dst, src net.Conn, toServer bool, x *exchange) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.waitThawed()
		if n > 0 {
			// Counted before the bytes go on, so that the answer to them
			// is counted after.
			p.mu.Lock()
			if toServer && !x.clientLast {
				p.flights++
			}
			x.clientLast = toServer
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
			if toServer {
				p.mu.Lock()
				if p.trigger != nil && bytes.Contains(buf[:n], p.trigger) {
					p.frozen = true
				}
				p.mu.Unlock()
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

func (p *proxy) waitThawed() {
	p.mu.Lock()
	for p.frozen && !p.closed {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

func (p *proxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// freezeAfter makes the proxy freeze once it has forwarded to the server
// bytes that hold b (in one read): the server gets them, and its answer
// stays in the proxy.
func (p *proxy) freezeAfter(b []byte) {
	p.mu.Lock()
	p.trigger = b
	p.mu.Unlock()
}

// roundTrips returns the round trips counted since the last call.
func (p *proxy) roundTrips() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.flights
	p.flights = 0
	return n
}

func (p *proxy) resume() {
	p.mu.Lock()
	p.frozen = false
	p.trigger = nil
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}
