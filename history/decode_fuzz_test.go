package history

import (
	"fmt"
	"testing"
	"time"
)

// FuzzParseVersion: a version's entry name that parses is one claim could
// have made, and parses back the same once made again.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{
		"000001-1796323654242304269-write",
		"000012-1796323654242304269-update",
		"000003--86400000000000-delete", // a clock before 1970
		"9223372036854775807-0-delete",
		"+5-1-write", "-1-2-write", "1-2", "path", "counter", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		v, ok := parseVersion(entry)
		if !ok {
			return
		}
		if v.N < 0 {
			t.Fatalf("parseVersion(%q): number %d", entry, v.N)
		}
		again := fmt.Sprintf("%06d-%d-%s", v.N, v.Time.UnixNano(), v.Op)
		w, ok := parseVersion(again)
		if !ok || w.N != v.N || !w.Time.Equal(v.Time) || w.Op != v.Op || w.Time.Location() != time.UTC {
			t.Fatalf("parseVersion(%q) = %+v; made again as %q, it parses as %+v, %v", entry, v, again, w, ok)
		}
	})
}

// FuzzParseUsage: a usage counter that parses holds no negative number
// and encodes back to what parses the same.
func FuzzParseUsage(f *testing.F) {
	for _, s := range []string{"1 0", "7 1048576", "1 4611686018427387904", "-1 5", "1 -5", "1", "", " ", "1  2", "9223372036854775807 9223372036854775807"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u, ok := parseUsage(data)
		if !ok {
			return
		}
		if u.gen < 0 || u.bytes < 0 {
			t.Fatalf("parseUsage(%q) = %+v", data, u)
		}
		if w, ok := parseUsage(u.encode()); !ok || w != u {
			t.Fatalf("parseUsage(%q) = %+v; encoded again, %+v, %v", data, u, w, ok)
		}
	})
}
