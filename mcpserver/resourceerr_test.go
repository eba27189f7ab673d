package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/memstore"
)

// TestResourceReadRefusals: a read the store or a policy refuses — a
// symbolic link out of the store, a file the encryption policy cannot
// open — is answered with the reason memory_view gives, not as an
// internal error, and is not logged as a store failure.
func TestResourceReadRefusals(t *testing.T) {
	ctx := context.Background()

	fstore := backendtest.FileStore(t)
	if err := os.Symlink("/etc/passwd", filepath.Join(fstore.Dir(), "link.txt")); err != nil {
		t.Fatal(err)
	}

	plain := memstore.New()
	if err := plain.WriteFile(ctx, "plain.txt", []byte("not encrypted"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	estore := backendtest.Encrypted(t, plain)

	for _, c := range []struct {
		name  string
		store memtool.Store
		path  string
		want  string // in memory_view's answer and the read's error
	}{
		{"symbolic link", fstore, "/memories/link.txt", "escape"},
		{"unencrypted file", estore, "/memories/plain.txt", "cannot be opened"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			mem := memtool.New(c.store, &memtool.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
			view := mem.Run(ctx, []byte(`{"command":"view","path":"`+c.path+`"}`))
			if !view.IsError || !strings.Contains(view.Text, c.want) {
				t.Fatalf("memory_view: %+v, want a refusal with %q", view, c.want)
			}
			log.Reset()
			cs := connect(t, mem, nil)
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://" + c.path})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), c.want) {
				t.Errorf("read: %v; want invalid params with %q", err, c.want)
			}
			if strings.Contains(log.String(), "level=ERROR") {
				t.Errorf("a refused read was logged as a failure: %s", log.String())
			}
		})
	}
}
