package objectstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool/objectstore"
)

// A bucket URL with a user or password in it (s3://KEY:SECRET@bucket) is
// refused, since the credentials would not be used, and the error never
// quotes the secret.
func TestOpenRefusesCredentialsInURL(t *testing.T) {
	for _, u := range []string{
		"s3://AKIDEXAMPLE:hunter2secret@bucket?region=us-east-1",
		"s3://hunter2secret@bucket",
		"mem+blob://hunter2secret:x@",
		"file+blob://hunter2secret:x@localhost/abs/dir",
		"gs://hunter2secret:x@bucket",
		"azblob://hunter2secret:x@container",
	} {
		s, err := objectstore.Open(context.Background(), u)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", u)
			continue
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open(%q): the error shows the secret: %v", u, err)
		}
	}
}
