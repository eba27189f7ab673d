package expiry

import (
	"encoding/json"
	"maps"
	"testing"
	"time"
)

// FuzzParseIndex: an access index that parses is one of this format,
// with a map to record uses in, that encodes back to the same; and the
// batch a gc would name after it reads back as a batch.
func FuzzParseIndex(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"access":{"a.md":1790000000,"dir/b.md":1790003600}}`,
		`{"version":1,"access":{}}`,
		`{"version":1,"access":{"a.md":0,"b.md":-1,"c.md":10000000000000}}`,
		`{"version":1,"access":{"a.md":9223372036854775807}}`,
		`{"version":2,"access":{"a.md":1},"unit":"ms"}`,
		`{"version":1,"access":{"a.md":1.5}}`,
		`{"version":1,"access":{"a.md":1790000000}`, // truncated
		`{"version":1,"access":null}`, `null`, `[]`, ``, "\x00\x00\x00",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := parseIndex(data)
		if err != nil {
			return
		}
		if ix.Access == nil || ix.Version > indexVersion {
			t.Fatalf("parseIndex(%q) = %+v", data, ix)
		}
		enc, err := json.Marshal(ix)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseIndex(enc)
		if err != nil || again.Version != ix.Version || !maps.Equal(again.Access, ix.Access) {
			t.Fatalf("parseIndex(%q) = %+v; encoded again, %+v, %v", data, ix, again, err)
		}
		name := batchTime(now, ix, nil).Format(stampLayout)
		if _, err := time.Parse(stampLayout, name); err != nil {
			t.Fatalf("after the index %q, a gc names its batch %q, which does not read back: %v", data, name, err)
		}
	})
}
