package objectstore_test

import (
	"context"
	"strings"
	"testing"
)

// A file whose name is long and not ASCII renames on S3: the copy names
// its source in its metadata, which S3 bounds at 2 KB, and 400 × "é"
// path-escaped is 2,400 bytes.
func TestS3RenameLongNonASCIIName(t *testing.T) {
	srv := startS3(t)
	s := srv.open(t, srv.newBucket(t), nil)
	long := strings.Repeat("é", 400)
	write(t, s, long, "v1")
	if err := s.Rename(context.Background(), long, "short.txt"); err != nil {
		t.Fatalf("Rename of a 400-letter non-ASCII name: %v", err)
	}
	if err := s.Rename(context.Background(), "short.txt", long+"2"); err != nil {
		t.Fatalf("Rename onto a long non-ASCII name: %v", err)
	}
	checkContents(t, s, map[string]string{long + "2": "v1"})
}
