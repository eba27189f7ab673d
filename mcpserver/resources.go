package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
)

// ResourceScheme is the URI scheme of the memory's files as MCP resources:
// a file's URI is memory:// and its path, percent-escaped as in a URL's
// path, such as memory:///memories/project/notes.md.
const ResourceScheme = "memory"

// resourceTemplate matches the URI of every file below /memories.
const resourceTemplate = ResourceScheme + "://" + memtool.Root + "/{+path}"

// resourcesPageSize is the most resources one resources/list answer holds;
// its nextCursor gives the rest.
const resourcesPageSize = 100

// ResourceURI is the resource URI of a file's path below /memories, such
// as /memories/a b.txt (memory:///memories/a%20b.txt).
func ResourceURI(virtualPath string) string {
	return (&url.URL{Scheme: ResourceScheme, Path: virtualPath}).String()
}

// addResources serves the files of mem as resources: resources/list
// answers them, paginated, and the template reads any file below
// /memories. Each request ends at timeout, as a tool call does.
func addResources(s *mcp.Server, mem *memtool.Memory, timeout time.Duration) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: resourceTemplate,
		Name:        "memory-file",
		Title:       "Memory file",
		Description: "A file of the memory directory, by its path below /memories, as it is stored.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return readResource(ctx, mem, req.Params.URI)
	})
	// The SDK lists only resources added one by one; the files change
	// under it, so resources/list is answered here, from the store.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return listResources(ctx, mem, cursor)
		}
	})
}

// listResources answers one page of the memory's files, in name order,
// after cursor (the last name of the page before, base64url-encoded).
// Hidden entries are left out, as view's listings leave them out.
func listResources(ctx context.Context, mem *memtool.Memory, cursor string) (*mcp.ListResourcesResult, error) {
	after, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
	}
	var files []memtool.FileInfo // with Name the whole name
	err = memtool.Walk(ctx, mem.Store(), "", func(name string, fi memtool.FileInfo) error {
		switch {
		case name == "":
			return nil
		case memtool.Hidden(fi.Name):
			if fi.IsDir() {
				return fs.SkipDir
			}
		case fi.IsRegular() && name > string(after) && readable(name):
			fi.Name = name
			files = append(files, fi)
		}
		return nil
	})
	if err != nil {
		// The store's words may name host paths, servers or users: the
		// client learns only that listing failed, as memory_view's
		// answer to a store failure says only that it failed.
		mem.Options().Logger.ErrorContext(ctx, "mcpserver: listing resources", "err", err)
		return nil, errors.New("internal error: the memory could not be listed")
	}
	slices.SortFunc(files, func(a, b memtool.FileInfo) int { return strings.Compare(a.Name, b.Name) })
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	if len(files) > resourcesPageSize {
		files = files[:resourcesPageSize]
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(files[len(files)-1].Name))
	}
	for _, f := range files {
		p := memtool.VirtualPath(f.Name)
		res.Resources = append(res.Resources, &mcp.Resource{URI: ResourceURI(p), Name: p, Title: path.Base(f.Name), Size: f.Size})
	}
	return res, nil
}

// readable reports whether the path gate lets a client name the file:
// only such files are listed, so every listed resource can be read.
func readable(name string) bool {
	clean, _, err := memtool.CleanPath(memtool.VirtualPath(name))
	return err == nil && clean == name
}

// readResource answers the file at uri exactly as stored: UTF-8 text as
// text (text/plain), anything else as a blob with the media type its
// bytes suggest; an empty file is an empty blob of text/plain (the
// protocol's text contents cannot be empty in the SDK's encoding).
// A read the store or a policy refuses is invalid params with its reason,
// as memory_view answers it; only other failures are internal errors.
func readResource(ctx context.Context, mem *memtool.Memory, uri string) (*mcp.ReadResourceResult, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != ResourceScheme || u.Host != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, invalidResource(uri, "not a memory:///memories/... URI")
	}
	name, dir, err := memtool.CleanPath(u.Path)
	if err != nil {
		return nil, invalidResource(uri, err.Error())
	}
	if dir || name == "" {
		return nil, invalidResource(uri, "a resource is a file, not a directory")
	}
	data, err := mem.Store().ReadFile(ctx, name, mem.Options().MaxReadSize)
	var refusal memtool.Refusal
	switch {
	case errors.Is(err, memtool.ErrNotExist):
		return nil, mcp.ResourceNotFoundError(uri)
	case errors.Is(err, memtool.ErrIsDir):
		return nil, invalidResource(uri, "a directory; list its files with resources/list")
	case errors.Is(err, memtool.ErrTooLarge):
		return nil, invalidResource(uri, fmt.Sprintf("larger than %d bytes", mem.Options().MaxReadSize))
	case errors.Is(err, memtool.ErrIrregular):
		return nil, invalidResource(uri, "not a regular file")
	case errors.Is(err, memtool.ErrEscapes):
		return nil, invalidResource(uri, "the path would escape "+memtool.Root+" via a symbolic link")
	case errors.As(err, &refusal):
		// A policy's refusal (a file encryption cannot open, say): its
		// text is for the client, as memory_view shows it.
		return nil, invalidResource(uri, string(refusal))
	case err != nil:
		mem.Options().Logger.Error("mcpserver: reading a resource", "uri", uri, "err", err)
		return nil, errors.New("internal error: the file could not be read")
	}
	c := &mcp.ResourceContents{URI: uri}
	switch {
	case len(data) == 0:
		c.MIMEType, c.Blob = "text/plain", []byte{}
	case utf8.Valid(data):
		c.MIMEType, c.Text = "text/plain", string(data)
	default:
		c.MIMEType, c.Blob = http.DetectContentType(data), data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

func invalidResource(uri, why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %s", uri, why)}
}
