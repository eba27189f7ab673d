package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// serve runs a Server made from cfg (Keys from f, memstores) on a loopback
// listener until the test ends, and returns its address.
func serve(t *testing.T, f *fixture, cfg server.Config, cert, key string) string {
	t.Helper()
	cfg.Keys = f.ring
	cfg.Open = func(context.Context, string) (memtool.Store, error) { return memstore.New(), nil }
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := listen(t, srv, cert, key)
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return addr
}

// listen runs srv.Serve on a new loopback listener, until stop; done
// gives what Serve returned.
func listen(t *testing.T, srv *server.Server, cert, key string) (addr string, stop func(), done <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, cert, key) }()
	return ln.Addr().String(), cancel, served
}

// A client that sends its headers too slowly is cut off.
func TestReadHeaderTimeout(t *testing.T) {
	f := newFixture(t, nil)
	addr := serve(t, f, server.Config{ReadHeaderTimeout: 100 * time.Millisecond}, "", "")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /v1/memory HTTP/1.1\r\nHost: x\r\n")) // and never the end
	conn.SetReadDeadline(time.Now().Add(time.Minute))             // a guard against a hang only
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server kept the connection open: %v", err)
	}
	if len(b) > 0 && !strings.Contains(string(b), "408") {
		t.Errorf("answer to a slow header: %q", b)
	}
}

// With a certificate, Serve speaks HTTPS.
func TestTLS(t *testing.T) {
	f := newFixture(t, nil)
	_, tok := f.key(t, "alice", keys.Write)
	cert, key, pool := selfSigned(t)
	addr := serve(t, f, server.Config{}, cert, key)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("POST", "https://"+addr+"/v1/memory", strings.NewReader(view))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.TLS == nil || !strings.Contains(string(b), "does not exist") {
		t.Errorf("HTTPS: %d %s", resp.StatusCode, b)
	}
	// Plain HTTP is not served (Go's TLS server answers it with a 400).
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served beside HTTPS")
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memtool test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
