package objectstore_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool/objectstore"
)

// testNotBuilt checks that this build refuses rawURL, a URL of a driver
// left out, with ErrNotBuilt and the text want, from Open and NotBuilt.
func testNotBuilt(t *testing.T, rawURL, want string) {
	scheme, _, _ := strings.Cut(rawURL, ":")
	if !slices.Contains(objectstore.Schemes, scheme) {
		t.Errorf("Schemes %v lacks %s", objectstore.Schemes, scheme)
	}
	err := objectstore.NotBuilt(scheme)
	if !errors.Is(err, objectstore.ErrNotBuilt) || err.Error() != want {
		t.Errorf("NotBuilt(%q) = %v, want %q", scheme, err, want)
	}
	s, err := objectstore.Open(t.Context(), rawURL)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%q) worked", rawURL)
	}
	if !errors.Is(err, objectstore.ErrNotBuilt) || !strings.Contains(err.Error(), want) {
		t.Errorf("Open(%q): %v\nwant ErrNotBuilt, saying %q", rawURL, err, want)
	}
}

// testBuilt checks that this build opens rawURL, a URL of a driver built
// in.
func testBuilt(t *testing.T, rawURL string) {
	scheme, _, _ := strings.Cut(rawURL, ":")
	if err := objectstore.NotBuilt(scheme); err != nil {
		t.Errorf("NotBuilt(%q) = %v", scheme, err)
	}
	s, err := objectstore.Open(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("Open(%q): %v", rawURL, err)
	}
	s.Close()
}

// TestBuiltIn: the drivers of the default build are never refused as
// left out, nor is a scheme Open does not know.
func TestBuiltIn(t *testing.T) {
	for _, scheme := range []string{"s3", "mem+blob", "file+blob", "nope"} {
		if err := objectstore.NotBuilt(scheme); err != nil {
			t.Errorf("NotBuilt(%q) = %v", scheme, err)
		}
	}
}
