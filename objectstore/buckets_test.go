package objectstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/gotool"
	"github.com/memtool/memtool/objectstore"
)

// TestDefaultBuildLeavesOutGocloud: the package imports nothing of
// gocloud.dev (nor the gRPC it brings) unless built with gcs or azure.
func TestDefaultBuildLeavesOutGocloud(t *testing.T) {
	for _, pkg := range gotool.Deps(t, "", ".") {
		if strings.HasPrefix(pkg, "gocloud.dev") || strings.HasPrefix(pkg, "google.golang.org/grpc") {
			t.Errorf("the default build imports %s", pkg)
		}
	}
	if !slices.Contains(gotool.Deps(t, "gcs", "."), "gocloud.dev/blob") {
		t.Errorf("the build with gcs does not import gocloud.dev/blob: the check above looks for the wrong names")
	}
}

// TestFileBucketCreates: on a file+blob bucket, of creates racing onto
// one name from stores that share only the directory (as processes
// would), exactly one wins, and names ending in .attrs are refused,
// leaving nothing behind.
func TestFileBucketCreates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const writers = 4
	stores := make([]*objectstore.Store, writers)
	for i := range stores {
		stores[i] = newStore(t, fileBucket(dir), "")
	}
	raceCreates(t, stores, 20)

	s := stores[0]
	if err := s.WriteFile(ctx, "x.attrs", []byte("y"), memtool.CreateOnly); err == nil || !strings.Contains(err.Error(), ".attrs") {
		t.Errorf("writing x.attrs: %v, want a refusal that names .attrs", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "f", "x.attrs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the refusal: %v", err)
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, ".memtool-tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestOpenS3URL: an s3:// URL's parameters reach the S3 client (here an
// in-process server, path-style, without credentials), and unknown or
// malformed ones are refused.
func TestOpenS3URL(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	srv := startS3(t)
	name := srv.newBucket(t)
	u := "s3://" + name + "?region=eu-west-1&anonymous=true&use_path_style=true&prefix=p&endpoint=" + srv.URL
	s, err := objectstore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.WriteFile(ctx, "a.md", []byte("hi"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if data, err := srv.open(t, name, &objectstore.Options{Prefix: "p"}).ReadFile(ctx, "a.md", 10); err != nil || string(data) != "hi" {
		t.Errorf("read through another client: %q, %v", data, err)
	}
	if s, err := objectstore.NewS3(srv.Client(), &objectstore.Options{Prefix: "p"}); err == nil || !strings.Contains(err.Error(), "S3Bucket") {
		if s != nil {
			s.Close()
		}
		t.Errorf("NewS3 without a bucket name: %v, want an error naming Options.S3Bucket", err)
	}
	for u, want := range map[string]string{
		"s3://b?nope=1":                 `unknown query parameter "nope"`,
		"s3://b?use_path_style=perhaps": `invalid value for use_path_style: "perhaps"`,
		"s3://b?awssdk=v1&anonymous=no": `invalid value for anonymous: "no"`,
	} {
		if s, err := objectstore.Open(ctx, u); err == nil || !strings.Contains(err.Error(), want) {
			if s != nil {
				s.Close()
			}
			t.Errorf("Open(%q): %v, want an error saying %s", u, err, want)
		}
	}
}

// TestFileBucketReusesNames: on a file+blob bucket, a file can take the
// name of a directory that was removed (whose empty directory on disk
// stays behind), and a directory the name of a removed file.
func TestFileBucketReusesNames(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, fileBucket(t.TempDir()), "")
	for _, step := range []func() error{
		func() error { return s.Mkdir(ctx, "a") },
		func() error { return s.WriteFile(ctx, "a/x", []byte("1"), memtool.CreateOnly) },
		func() error { return s.RemoveAll(ctx, "a") },
		func() error { return s.WriteFile(ctx, "a", []byte("file"), memtool.CreateOnly) },
		func() error { return s.Remove(ctx, "a") },
		func() error { return s.Mkdir(ctx, "a") },
		func() error { return s.WriteFile(ctx, "b", []byte("b"), memtool.CreateOnly) },
		func() error { return s.Rename(ctx, "b", "a/b") },
		func() error { return s.Remove(ctx, "a/b") },
		func() error { return s.Remove(ctx, "a") },
		func() error { return s.WriteFile(ctx, "a", []byte("again"), memtool.Replace) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if data, err := s.ReadFile(ctx, "a", 10); err != nil || string(data) != "again" {
		t.Errorf("a holds %q, %v", data, err)
	}
}
