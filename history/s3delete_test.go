package history_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// TestS3DeleteRefusedKeepsFile: a delete through the wrapper over an S3
// store whose service refuses to delete the file (403 AccessDenied, as a
// bucket policy without s3:DeleteObject answers) tells the model it
// failed, the file stays as it was and can still be edited, and the
// trash holds nothing. The wrapper's move into the trash copies the file
// and then deletes it: the copy must not be taken for the delete.
func TestS3DeleteRefusedKeepsFile(t *testing.T) {
	ctx := context.Background()
	inner, deny := deleteDeniedS3(t, "/f/notes.txt")
	m := memtool.New(history.New(inner, nil), nil)
	if res := m.Execute(ctx, &memtool.Create{Path: "/memories/notes.txt", FileText: "old"}); res.IsError {
		t.Fatal(res.Text)
	}
	deny.Store(true)
	res := m.Execute(ctx, &memtool.Delete{Path: "/memories/notes.txt"})
	if got, err := inner.ReadFile(ctx, "notes.txt", 1<<20); err != nil || string(got) != "old" {
		t.Fatalf("after the refused delete (told %q), the file holds %q, %v", res.Text, got, err)
	}
	if !res.IsError {
		t.Errorf("the delete was refused by the service and the file is still there, but the model is told %q", res.Text)
	}
	deny.Store(false)
	if res := m.Execute(ctx, &memtool.StrReplace{Path: "/memories/notes.txt", OldStr: "old", NewStr: "new"}); res.IsError {
		t.Errorf("editing the file after the refused delete: %s", res.Text)
	}
	if left, _ := inner.ReadDir(ctx, history.DirName+"/trash"); len(left) != 0 {
		t.Errorf("left in the trash: %v", left)
	}
}

// deleteDeniedS3 is an S3 store on a test service that, while deny is
// set, refuses (403 AccessDenied, as a bucket policy without
// s3:DeleteObject answers) every DELETE of an object whose URL path ends
// in suffix.
func deleteDeniedS3(t *testing.T, suffix string) (memtool.Store, *atomic.Bool) {
	deny := new(atomic.Bool)
	srv := s3test.Start(t, &s3test.Options{Fail: func(r *http.Request) string {
		if deny.Load() && r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, suffix) {
			return "AccessDenied"
		}
		return ""
	}})
	srv.CreateBucket(t, "b")
	inner, err := objectstore.NewS3(srv.Client(), &objectstore.Options{S3Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	return inner, deny
}
