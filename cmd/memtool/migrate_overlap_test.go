package main

import (
	"slices"
	"strings"
	"testing"
)

// TestMigrateRefusesOverlappingPrefixes: two stores in one bucket whose
// keys overlap (one's prefix is the other's, or inside the other's
// memory, PREFIX/f/ or PREFIX/tenants/) are refused before anything is
// written, as overlapping directories are: migrate once copied from
// prefix=a into prefix=a/f/zz, and the source, which lists its keys
// under a/f/, gained a directory zz holding a copy of itself.
func TestMigrateRefusesOverlappingPrefixes(t *testing.T) {
	t.Parallel()
	src := s3URL(t, "a")
	seedTree(t, src, "")
	before := walkNames(t, src)
	at := func(prefix string) string { return strings.Replace(src, "prefix=a", "prefix="+prefix, 1) }
	for _, to := range []string{at("a/f/zz"), at("/a/"), at("a/tenants/x")} {
		out, stderr, code := runMigrateBinary(t, "--from", src, "--to", to, "--force")
		if code != exitUsage || out != "" || !strings.Contains(stderr, "overlap") {
			t.Errorf("migrate into %s: exit %d\nstdout: %s\nstderr: %s", to, code, out, stderr)
		}
		if after := walkNames(t, src); !slices.Equal(after, before) {
			t.Fatalf("migrate into %s changed the source:\n got: %q\nwant: %q", to, after, before)
		}
	}
	// Beside the source, in the same bucket, is no overlap.
	for _, to := range []string{at("b"), at("a2"), at("a/backup"), at("")} {
		migrateOK(t, "--from", src, "--to", to)
	}
	if after := walkNames(t, src); !slices.Equal(after, before) {
		t.Errorf("a copy beside the source changed it: %q", after)
	}
	// Another bucket, or another service, is another store.
	for _, to := range []string{
		strings.Replace(src, "s3://memories", "s3://other", 1),
		strings.Replace(src, "endpoint=", "endpoint=http://elsewhere.example&x=", 1),
	} {
		if overlap(src, to) {
			t.Errorf("%s and %s overlap", src, to)
		}
	}
}
