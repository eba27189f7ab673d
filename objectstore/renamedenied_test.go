package objectstore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// denyDelete returns a store on a server that refuses (403 AccessDenied,
// as a bucket policy without s3:DeleteObject answers) every DELETE of a
// key ending in suffix, deleting nothing.
func denyDelete(t *testing.T, suffix string) *objectstore.Store {
	t.Helper()
	srv := startS3With(t, &s3test.Options{Fail: func(r *http.Request) string {
		if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, suffix) {
			return "AccessDenied"
		}
		return ""
	}})
	return srv.open(t, srv.newBucket(t), nil)
}

// A rename whose delete of the source the service refuses takes its copy
// back: the file is at its old name only, editable, and Rename says that
// it failed, not that its outcome is unknown. (A copy left behind would
// refuse every edit while the source is there, and a caller that sees the
// copy, as history's move into its trash does, would take the file for
// moved.)
func TestS3RenameSourceDeleteRefused(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		s := denyDelete(t, "/f/old.txt")
		write(t, s, "old.txt", "v1")
		err := s.Rename(context.Background(), "old.txt", "new.txt")
		if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
			t.Errorf("Rename = %v, want the service's refusal", err)
		}
		checkRenamed(t, s, err, "old.txt", "new.txt", map[string]string{"old.txt": "v1"})
	})
	t.Run("directory", func(t *testing.T) {
		s := denyDelete(t, "/f/old/b.txt")
		mkdir(t, s, "old")
		write(t, s, "old/a.txt", "a")
		write(t, s, "old/b.txt", "b")
		err := s.Rename(context.Background(), "old", "new")
		if ref := memtool.Refusal(""); !errors.As(err, &ref) || !strings.Contains(err.Error(), "/memories/old/b.txt") {
			t.Errorf("Rename = %v, want the refusal naming /memories/old/b.txt", err)
		}
		checkContents(t, s, map[string]string{"old/a.txt": "(missing)", "new/a.txt": "a", "old/b.txt": "b", "new/b.txt": "(missing)"})
		checkEditable(t, s, "old/b.txt", "new/a.txt")
	})
}
