package storeurl_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/storeurl"
)

// TestPasswordHeadMasked: a password with an unescaped '/', '?' or '#'
// ends a URL's authority there, so Go's URL parser takes what comes
// before it for a port and quotes it in its error (invalid port
// ":HEAD" after host), and before a '#' quotes the URL cut there. Open's
// error once showed that head of the password in both.
func TestPasswordHeadMasked(t *testing.T) {
	for _, pw := range []string{"Zq9Xw7Vt/ab", "Zq9Xw7Vt?ab", "Zq9Xw7Vt#ab", "Xy/Zq9Xw7Vt"} {
		for _, u := range []string{
			"sqlite://bob:" + pw + "@host/x.db",
			"file://bob:" + pw + "@host/x",
			"file+blob://bob:" + pw + "@host/x",
			"s3://bob:" + pw + "@bucket?region=us-east-1",
			"mem+blob://bob:" + pw + "@x",
		} {
			_, closer, err := storeurl.Open(t.Context(), u, nil)
			if err == nil {
				closer.Close()
				t.Errorf("Open(%q) worked", u)
				continue
			}
			for _, part := range []string{"Zq9X", "w7Vt", `:Xy"`} {
				if strings.Contains(err.Error(), part) {
					t.Errorf("Open(%q): %v shows %q of the password", u, err, part)
				}
			}
		}
	}
}
