package workdir

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/tools/agenttoolset"
)

// guarded is one of the SDK's file tools with a check of ours run before
// it: refuse returns the text of a refusal, or "" to let the SDK's tool
// decide (it confines the path itself).
type guarded struct {
	tool   anthropic.BetaTool
	refuse func(input json.RawMessage) string
}

func (g *guarded) Name() string        { return g.tool.Name() }
func (g *guarded) Description() string { return g.tool.Description() }
func (g *guarded) InputSchema() anthropic.BetaToolInputSchemaParam {
	return g.tool.InputSchema()
}

func (g *guarded) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	if msg := g.refuse(input); msg != "" {
		return nil, &agenttoolset.ToolError{Content: msg}
	}
	return g.tool.Execute(ctx, input)
}

// guardWrite refuses a write to a directory. The SDK's write makes its
// temporary file in the target's parent and renames it over the target,
// so for the work directory itself (".", "sub/..", a link to ".") it made
// a file beside the work directory, outside it, before the rename failed.
func guardWrite(dir string, tool anthropic.BetaTool) anthropic.BetaTool {
	return &guarded{tool: tool, refuse: func(input json.RawMessage) string {
		var in struct {
			FilePath string `json:"file_path"`
		}
		if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
			return ""
		}
		if fi, ok := statInside(dir, in.FilePath); ok && fi.IsDir() {
			return fmt.Sprintf("write %s: is a directory", in.FilePath)
		}
		return ""
	}}
}

// guardGrep refuses a grep whose path is neither a directory nor a
// regular file: rg opens a path it is given whatever it is, and on a FIFO
// it waits for a writer, the run with it, for ever.
func guardGrep(dir string, tool anthropic.BetaTool) anthropic.BetaTool {
	return &guarded{tool: tool, refuse: func(input json.RawMessage) string {
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(input, &in) != nil || in.Path == "" {
			return ""
		}
		if fi, ok := statInside(dir, in.Path); ok && !fi.IsDir() && !fi.Mode().IsRegular() {
			return fmt.Sprintf("grep: %s is not a regular file or a directory", in.Path)
		}
		return ""
	}}
}

// statInside stats the model's path p, taken from the work directory dir
// as the SDK takes it (".." collapsed before any link is followed), its
// links followed (see statResolved) when they end inside dir, links
// outside dir included. ok is false
// when p leads outside dir or cannot be stat'ed: the SDK's tool then
// refuses it or reports the error in its own words.
func statInside(dir, p string) (fi fs.FileInfo, ok bool) {
	if strings.IndexByte(p, 0) >= 0 {
		return nil, false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, false
	}
	// The SDK joins a relative path to the work directory, its links
	// resolved, before it follows any link: "../work" is the work
	// directory work itself, not a path that leads outside.
	name := filepath.Clean(p)
	if !filepath.IsAbs(name) {
		name = filepath.Join(real, name)
	}
	rel, inside := relInside(dir, name)
	if !inside {
		if rel, inside = relInside(real, name); !inside {
			// Maybe through a link outside dir that leads back into it
			// (/proc/self/cwd, another name of one of dir's parents),
			// which the SDK follows.
			return statResolved(real, name)
		}
	}
	name = rel
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false
	}
	defer root.Close()
	if fi, err = root.Stat(name); err == nil {
		return fi, true
	}
	return statResolved(real, filepath.Join(dir, name))
}

// statResolved stats the absolute path p with every link followed, as the
// SDK's tools follow them, if it ends inside realDir, the work directory
// with its links resolved (realDir itself included). os.Root refuses a
// link whose target is absolute, or that passes outside dir on its way,
// even when it ends inside dir: without this, a link to dir by its
// absolute path (a write to it makes a file beside dir) or to a FIFO
// inside dir (a grep of it waits for ever) went to the SDK unchecked.
func statResolved(realDir, p string) (fs.FileInfo, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, false
	}
	if _, inside := relInside(realDir, real); !inside {
		return nil, false
	}
	fi, err := os.Stat(real)
	return fi, err == nil
}

// relInside returns abs relative to dir, if abs is dir or under it.
func relInside(dir, abs string) (string, bool) {
	rel, err := filepath.Rel(dir, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", false
	}
	return rel, true
}
