//go:build gcs || azure

package objectstore_test

import (
	"context"
	"slices"
	"testing"

	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/blob/s3blob"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/storetest"
)

// TestGocloudBuckets: in a build with gocloud.dev/blob (the gcs and azure
// tags), a store on a bucket opened through it (New) passes the
// conformance suite, as gs:// and azblob:// stores are such buckets; an
// s3blob bucket given with Options.S3Bucket is spoken to as NewS3 does.
func TestGocloudBuckets(t *testing.T) {
	t.Run("memblob", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) memtool.Store {
			s, err := objectstore.New(memblob.OpenBucket(nil), nil)
			return storetest.Opened(t, s, err)
		})
	})
	t.Run("fileblob", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) memtool.Store {
			b, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
			if err != nil {
				t.Fatal(err)
			}
			s, err := objectstore.New(b, &objectstore.Options{Prefix: "p"})
			return storetest.Opened(t, s, err)
		})
	})
	t.Run("s3blob", func(t *testing.T) {
		srv := startS3(t)
		storetest.Run(t, func(t *testing.T) memtool.Store {
			name := srv.newBucket(t)
			b, err := s3blob.OpenBucket(context.Background(), srv.Client(), name, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := objectstore.New(b, &objectstore.Options{S3Bucket: name})
			return storetest.Opened(t, s, err)
		})
	})
}

// TestFileBucketLayout: a directory written through gocloud's directory
// driver (as earlier versions of file+blob did) reads and lists the same
// through file+blob, and the other way round, names that need an escape
// included.
func TestFileBucketLayout(t *testing.T) {
	ctx := context.Background()
	names := []string{"a.md", "__0x41__", "x__0x2f__y", "ü__0x__.md", "__0x5f__"}
	for _, gocloudWrites := range []bool{true, false} {
		dir := t.TempDir()
		b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
		if err != nil {
			t.Fatal(err)
		}
		gs, err := objectstore.New(b, &objectstore.Options{Prefix: "p"})
		var writer, reader memtool.Store = storetest.Opened(t, gs, err), newStore(t, fileBucket(dir), "p")
		if !gocloudWrites {
			writer, reader = reader, writer
		}
		if err := writer.Mkdir(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range names {
			for _, name := range []string{n, "d/" + n} {
				if err := writer.WriteFile(ctx, name, []byte(name), memtool.CreateOnly); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if data, err := reader.ReadFile(ctx, name, 100); err != nil || string(data) != name {
					t.Errorf("gocloud writes: %v: %s read back as %q, %v", gocloudWrites, name, data, err)
				}
			}
			want = append(want, n)
		}
		for _, d := range []string{"", "d"} {
			entries, err := reader.ReadDir(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				if !e.IsDir() {
					got = append(got, e.Name)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("gocloud writes: %v: directory %q lists %q, want %q", gocloudWrites, d, got, want)
			}
		}
	}
}
