package claude

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// HelperDir returns the directory that holds the memory files of the
// Anthropic Python and TypeScript SDKs' local filesystem memory helpers
// when they were given base: they keep the model's /memories/notes.md at
// <base>/memories/notes.md. Open that directory with filestore to share
// their files: the model then sees /memories/notes.md, not
// /memories/memories/notes.md.
func HelperDir(base string) string {
	return filepath.Join(base, "memories")
}

// OpenHelperDir opens the memory files of a Python or TypeScript helper
// given base as a file store, creating <base>/memories if it does not
// exist yet, as those helpers do.
func OpenHelperDir(base string) (*filestore.Store, error) {
	dir := HelperDir(base)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return filestore.Open(dir, nil)
}

// ClearAll deletes everything under /memories, as the Python helper's
// clear_all_memory does, through the Tool's Memory (so its policies and
// history apply). It returns an error naming each entry it could not
// delete; those that it could are gone.
func (t *Tool) ClearAll(ctx context.Context) error {
	entries, err := t.mem.Store().ReadDir(ctx, "")
	if err != nil {
		return fmt.Errorf("claude: clearing memory: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := memtool.Root + "/" + e.Name
		if r := t.mem.Execute(ctx, &memtool.Delete{Path: path}); r.IsError {
			errs = append(errs, fmt.Errorf("claude: clearing memory: %s: %s", path, r.Text))
		}
	}
	return errors.Join(errs...)
}
