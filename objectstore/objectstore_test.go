package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy/tenancytest"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
	"github.com/memtool/memtool/storetest"
)

// newStore opens the store at bucket (a mem+blob or file+blob URL) under
// prefix.
func newStore(t *testing.T, bucket, prefix string) *objectstore.Store {
	t.Helper()
	if prefix != "" {
		bucket += "?prefix=" + url.QueryEscape(prefix)
	}
	s, err := objectstore.Open(t.Context(), bucket)
	return storetest.Opened(t, s, err)
}

// memBucket is a new bucket in memory at each open.
const memBucket = "mem+blob://"

// fileBucket is the URL of a bucket in the directory dir.
func fileBucket(dir string) string { return "file+blob://" + dir }

// s3Server is an in-process S3-compatible server (package s3test); the
// store talks to it through the AWS SDK v2 client, over HTTP, as it would
// to S3.
type s3Server struct{ *s3test.Server }

func startS3(t *testing.T) s3Server { return startS3With(t, nil) }

func startS3With(t *testing.T, opts *s3test.Options) s3Server {
	return s3Server{s3test.Start(t, opts)}
}

var bucketSeq struct {
	sync.Mutex
	n int
}

// newBucket creates a new bucket on the server and returns its name.
func (srv s3Server) newBucket(t *testing.T) string {
	t.Helper()
	bucketSeq.Lock()
	bucketSeq.n++
	name := fmt.Sprintf("bucket-%d", bucketSeq.n)
	bucketSeq.Unlock()
	srv.CreateBucket(t, name)
	return name
}

// open returns a new handle on the bucket: its own client, its own store,
// as another process would have.
func (srv s3Server) open(t *testing.T, name string, opts *objectstore.Options) *objectstore.Store {
	t.Helper()
	o := objectstore.Options{S3Bucket: name}
	if opts != nil {
		o.Prefix = opts.Prefix
	}
	s, err := objectstore.NewS3(srv.Client(), &o)
	return storetest.Opened(t, s, err)
}

// onEachBucket runs a storetest suite on stores on each kind of bucket: in
// memory, in a directory (under a prefix) and on an S3 server.
func onEachBucket(t *testing.T, suite func(*testing.T, func(*testing.T) memtool.Store)) {
	t.Run("memblob", func(t *testing.T) {
		suite(t, func(t *testing.T) memtool.Store { return newStore(t, memBucket, "") })
	})
	t.Run("fileblob", func(t *testing.T) {
		suite(t, func(t *testing.T) memtool.Store { return newStore(t, fileBucket(t.TempDir()), "some/prefix") })
	})
	t.Run("s3", func(t *testing.T) {
		srv := startS3(t)
		suite(t, func(t *testing.T) memtool.Store { return srv.open(t, srv.newBucket(t), nil) })
	})
}

func TestConformance(t *testing.T) { onEachBucket(t, storetest.Run) }

func TestTenantSuite(t *testing.T) { onEachBucket(t, storetest.RunTenants) }

// TestTenancy runs the tenancy checks RunTenants lacks (see tenancytest),
// and checks that another prefix of the same bucket is another store.
func TestTenancy(t *testing.T) {
	tenancytest.Check(t, func(t *testing.T) tenancytest.Opener {
		b := fileBucket(t.TempDir())
		return func(t *testing.T) tenancytest.Store { return newStore(t, b, "p") }
	})

	ctx := context.Background()
	b := fileBucket(t.TempDir())
	if _, err := newStore(t, b, "").Stat(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := newStore(t, b, "multi").Tenant(ctx, "t1"); err != nil {
		t.Errorf("Tenant under another prefix of a single-tenant bucket: %v", err)
	}
}

// TestLayout checks the keys: files under PREFIX/f/ (or
// PREFIX/tenants/ID/f/), a marker object per directory, so that an empty
// directory exists and is listed.
func TestLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newStore(t, fileBucket(dir), "/mem/")
	ts, err := s.Tenant(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Mkdir(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := ts.WriteFile(ctx, "a/b.txt", []byte("hi"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files)
	want := []string{"mem/.memtool-tenancy", "mem/tenants/u1/f/a/.memtool-dir", "mem/tenants/u1/f/a/b.txt"}
	if !slices.Equal(files, want) {
		t.Errorf("objects %q, want %q", files, want)
	}
	if err := ts.Remove(ctx, "a/b.txt"); err != nil {
		t.Fatal(err)
	}
	entries, err := ts.ReadDir(ctx, "")
	if err != nil || len(entries) != 1 || entries[0].Name != "a" || !entries[0].IsDir() {
		t.Errorf("after removing a/b.txt the root lists %v, %v; want the empty directory a", entries, err)
	}
}

// TestS3ConditionalWrites races writers that share nothing but the S3
// server (each its own client and store, as separate processes): of
// creates onto one name exactly one wins, and concurrent edits of one
// file lose no update, because every edit writes with If-Match.
func TestS3ConditionalWrites(t *testing.T) {
	ctx := context.Background()
	srv := startS3(t)
	name := srv.newBucket(t)
	const writers = 4
	stores := make([]*objectstore.Store, writers)
	for i := range stores {
		stores[i] = srv.open(t, name, nil)
	}
	rounds, edits := 10, 15
	if testing.Short() {
		rounds, edits = 4, 6
	}
	raceCreates(t, stores, rounds)

	if err := stores[0].WriteFile(ctx, "shared.txt", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i, s := range stores {
		wg.Go(func() {
			for j := range edits {
				line := fmt.Sprintf("%d.%d\n", i, j)
				if err := s.Update(ctx, "shared.txt", 1<<20, func(old []byte) ([]byte, error) {
					return append(old, line...), nil
				}); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	data, err := stores[0].ReadFile(ctx, "shared.txt", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != writers*edits {
		t.Fatalf("%d lines after %d acknowledged edits: updates were lost", len(lines), writers*edits)
	}
	for i := range writers {
		for j := range edits {
			if !slices.Contains(lines, fmt.Sprintf("%d.%d", i, j)) {
				t.Errorf("edit %d.%d is missing", i, j)
			}
		}
	}
}

// raceCreates races the stores (which share nothing but their bucket, as
// separate processes) to create one file, rounds times: exactly one wins
// each time, and the file holds its content.
func raceCreates(t *testing.T, stores []*objectstore.Store, rounds int) {
	t.Helper()
	ctx := context.Background()
	writers := len(stores)
	for round := range rounds {
		file := fmt.Sprintf("race%d.txt", round)
		var wins sync.WaitGroup
		errs := make([]error, writers)
		for i, s := range stores {
			wins.Go(func() {
				errs[i] = s.WriteFile(ctx, file, []byte(fmt.Sprintf("writer %d", i)), memtool.CreateOnly)
			})
		}
		wins.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both created %s", round, winner, i, file)
			case err == nil:
				winner = i
			case !errors.Is(err, memtool.ErrExist):
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody created %s", round, file)
		}
		data, err := stores[0].ReadFile(ctx, file, 100)
		if err != nil || string(data) != fmt.Sprintf("writer %d", winner) {
			t.Fatalf("round %d: %s holds %q, %v; want the winner's", round, file, data, err)
		}
	}
}

func TestOpenURLs(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "bucket")
	for _, u := range []string{"mem+blob://", "mem+blob://?prefix=a/b", "file+blob://" + dir, "file+blob://" + dir + "?prefix=p"} {
		s, err := objectstore.Open(ctx, u)
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		if err := s.WriteFile(ctx, "x", []byte("y"), memtool.Replace); err != nil {
			t.Errorf("%s: %v", u, err)
		}
		s.Close()
	}
	for _, u := range []string{"mem+blob://host", "file+blob://relative/dir", "nope://x", "s3://", "mem+blob://?prefix=a/../b"} {
		if s, err := objectstore.Open(ctx, u); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}
