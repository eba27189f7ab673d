package storeurl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/storeurl"
)

// leftOut is a scheme of the registry whose driver a build may leave out,
// with the tag that adds it and the text of the refusal without it.
type leftOut struct {
	url, scheme, want string
	built             bool // whether this build has it (from the tagged files)
}

// TestLeftOut: in every build, a URL of a scheme whose driver is left out
// is refused by Open, Tenants and IsEmpty with an error that says how to
// build with it (and wraps objectstore.ErrNotBuilt); help text and LeftOut
// say the same. A scheme built in is not listed, and is not refused so.
func TestLeftOut(t *testing.T) {
	for _, c := range []leftOut{
		{"gs://bucket?prefix=p", "gs", "memtool was built without Google Cloud Storage; rebuild with -tags gcs", gcsBuilt},
		{"azblob://container?prefix=p", "azblob", "memtool was built without Azure Blob Storage; rebuild with -tags azure", azureBuilt},
	} {
		t.Run(c.scheme, func(t *testing.T) {
			listed := strings.Join(storeurl.LeftOut(), "\n")
			help := strings.Join(storeurl.Schemes(), "\n")
			if c.built {
				if strings.Contains(listed, c.want) || strings.Contains(help, c.want) {
					t.Errorf("built in, but said to be left out:\nLeftOut:\n%s\nSchemes:\n%s", listed, help)
				}
				return
			}
			if !strings.Contains(listed, c.scheme+": "+c.want) {
				t.Errorf("LeftOut() = %q, want it to say %q", listed, c.scheme+": "+c.want)
			}
			if !strings.Contains(help, c.scheme+"://") || !strings.Contains(help, c.want) {
				t.Errorf("Schemes() does not say that %s is left out:\n%s", c.scheme, help)
			}
			_, _, err := storeurl.Open(t.Context(), c.url, nil)
			check(t, "Open", err, c.want)
			_, err = storeurl.Tenants(t.Context(), c.url)
			check(t, "Tenants", err, c.want)
			_, err = storeurl.IsEmpty(t.Context(), c.url, "")
			check(t, "IsEmpty", err, c.want)
		})
	}
	for _, line := range storeurl.LeftOut() {
		if !strings.HasPrefix(line, "gs: ") && !strings.HasPrefix(line, "azblob: ") {
			t.Errorf("LeftOut() lists %q", line)
		}
	}
}

func check(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !errors.Is(err, objectstore.ErrNotBuilt) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v\nwant an error saying %q", what, err, want)
	}
}
