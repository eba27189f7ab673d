package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// resourceMemory is a Memory holding more files than one resources/list
// page, nested, with odd names, an image, an empty file, hidden entries
// and a name the path gate refuses (put there behind its back); it
// returns the visible files' paths and contents.
func resourceMemory(t *testing.T) (*memtool.Memory, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	files := map[string][]byte{
		"a.txt":                      []byte("one\ntwo"),
		"empty.md":                   {},
		"pic.png":                    pngFile(t),
		"dir/sub/deep.md":            []byte("line\r\nwith CRLF and a tab\t\n"),
		"names/a b #1?.txt":          []byte("spaces and URL characters"),
		"names/über – ünïcode.txt":   []byte("unicode name"),
		"bytes/latin1.txt":           {0xe9, 't', 0xe9},
		"bytes/zero.txt":             []byte("a\x00b"),
		"names/refused%2e%2e.txt":    []byte("HIDDEN: the path gate refuses its name"),
		"visible/.hidden-file.txt":   []byte("HIDDEN"),
		".git/config":                []byte("HIDDEN"),
		".memtool-history/a.txt":     []byte("HIDDEN: a policy's own file"),
		"dir/.memtool-expiry.json":   []byte("HIDDEN: a policy's own file"),
		"node_modules/pkg/index.js":  []byte("HIDDEN"),
		"visible/node_modules/x.txt": []byte("HIDDEN"),
	}
	for i := range 130 {
		files[fmt.Sprintf("many/%03d.txt", i)] = fmt.Appendf(nil, "file %d", i)
	}
	visible := map[string][]byte{}
	for name, data := range files {
		if _, err := memtool.MkdirAll(ctx, store, name[:max(0, strings.LastIndexByte(name, '/'))]); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteFile(ctx, name, data, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("HIDDEN")) {
			visible[memtool.Root+"/"+name] = data
		}
	}
	return memtool.New(store, nil), visible
}

// TestResources: resources/list gives every visible file once, in pages,
// and resources/read gives each exactly as stored; over the in-memory
// transport and over stateless HTTP, with write access and read-only.
func TestResources(t *testing.T) {
	mem, want := resourceMemory(t)
	open := staticTokens(map[string]access{"write": {mem, true}, "read": {mem, false}})
	sessions := map[string]*mcp.ClientSession{
		"in memory":            connect(t, mem, nil),
		"in memory, read-only": connect(t, mem, &mcpserver.Options{ReadOnly: true}),
		"HTTP":                 httpSession(t, "write", serve(t, 2, open, nil)...),
		"HTTP, read-only":      httpSession(t, "read", serve(t, 1, open, nil)...),
	}
	for _, name := range slices.Sorted(maps.Keys(sessions)) {
		t.Run(name, func(t *testing.T) { checkResources(t, sessions[name], want) })
	}
}

func checkResources(t *testing.T, cs *mcp.ClientSession, want map[string][]byte) {
	ctx := context.Background()
	var names []string
	var pages int
	params := &mcp.ListResourcesParams{}
	for {
		res, err := cs.ListResources(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			names = append(names, r.Name)
			if data, ok := want[r.Name]; !ok || r.URI != mcpserver.ResourceURI(r.Name) || r.Size != int64(len(data)) {
				t.Errorf("listed %+v", r)
			}
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	if pages != 2 || len(names) != len(want) || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("%d pages, %d resources, want 2 pages and %d distinct resources in order: %v", pages, len(names), len(want), names)
	}
	for p, data := range want {
		uri := mcpserver.ResourceURI(p)
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("read %s: %v", uri, err)
			continue
		}
		c := res.Contents[0]
		got := []byte(c.Text)
		if c.Blob != nil {
			got = c.Blob
		}
		if len(res.Contents) != 1 || c.URI != uri || !bytes.Equal(got, data) || utf8.Valid(data) != (c.MIMEType == "text/plain") {
			t.Errorf("read %s: %+v, want %q", uri, res.Contents, data)
		}
	}
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.ResourceURI("/memories/pic.png")}); err != nil || res.Contents[0].MIMEType != "image/png" {
		t.Errorf("the image's media type: %v %+v", err, res)
	}
	// Hidden files are left out of the list, as view leaves them out of
	// its listings, and read by their URI, as view reads them by path.
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.ResourceURI("/memories/.git/config")}); err != nil || res.Contents[0].Text != "HIDDEN" {
		t.Errorf("a hidden file by its URI: %v %+v", err, res)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "memory:///memories/{+path}" {
		t.Errorf("templates: %v %+v", err, templates)
	}
}

// TestResourceRefusals: URIs outside the memory, hidden-by-traversal,
// of directories, of other schemes, of missing files or of the files
// policies keep for themselves (.memtool…) read nothing, and a bad cursor
// is refused.
func TestResourceRefusals(t *testing.T) {
	mem, _ := resourceMemory(t)
	cs := connect(t, mem, nil)
	ctx := context.Background()
	for _, uri := range []string{
		"memory:///memories/../.git/config",
		"memory:///memories/%2e%2e/.git/config",
		"memory:///memories/many/../../etc/passwd",
		"memory:///etc/passwd",
		"memory:///memories",
		"memory:///memories/",
		"memory:///memories/dir",
		"memory:///memories/dir/",
		"memory://host/memories/a.txt",
		"memory:///memories/a.txt?x=1",
		"memory:///memories/a.txt#frag",
		"file:///memories/a.txt",
		"memory:/memories/a.txt",
		"memory:///memories/a.txt%00",
		"memory:///memories/missing.txt",
		"memory:///memories/.memtool-history/a.txt",
		"memory:///memories/%2Ememtool-history/a.txt",
		"memory:///memories/dir/.memtool-expiry.json",
		"memory:///memories/dir/.MEMTOOL-expiry.json",
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var rpc *jsonrpc.Error
		if err == nil || !errors.As(err, &rpc) || strings.Contains(err.Error(), "HIDDEN") {
			t.Errorf("read %s: %v %+v", uri, err, res)
		}
	}
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///memories/missing.txt"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "not base64!"}); err == nil {
		t.Error("a bad cursor was accepted")
	}
}

// failingReadDir is a store whose ReadDir fails with an error that names
// where the store keeps its files on the host, as an operating system's
// or a database driver's error does.
type failingReadDir struct {
	memtool.Store
}

const hostPath = "/srv/memtool/private/tenant-a"

func (failingReadDir) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	return nil, &fs.PathError{Op: "open", Path: hostPath + "/" + name, Err: syscall.EACCES}
}

// TestResourceListFailureHidden: a store failure while listing the
// resources reaches the client as an internal error, as it reaches the
// model from memory_view, without the store's own words (which may name
// host paths, servers or users); the full error goes to the Memory's log.
func TestResourceListFailureHidden(t *testing.T) {
	var log bytes.Buffer
	mem := memtool.New(failingReadDir{memstore.New()}, &memtool.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	cs := connect(t, mem, nil)
	_, err := cs.ListResources(context.Background(), nil)
	if err == nil || strings.Contains(err.Error(), hostPath) || strings.Contains(err.Error(), "permission denied") {
		t.Errorf("resources/list on a failing store: %v; want an error that does not show the store's", err)
	}
	if !strings.Contains(log.String(), hostPath) {
		t.Errorf("the store's error was not logged: %q", log.String())
	}
}
