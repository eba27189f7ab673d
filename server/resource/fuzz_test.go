package resource_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
)

// FuzzPrecondition sends a PUT with arbitrary If-Match and If-None-Match
// values (repeated, listed, weak, *, malformed) over a file and checks
// that the precondition stays compare-and-swap safe: with If-Match the
// write lands only if a value lists the file's strong ETag or *, with
// If-None-Match never over a file (without either it replaces the file),
// and a write that does not land leaves the file as it was.
func FuzzPrecondition(f *testing.F) {
	const old = "old content\n"
	tag := resource.ETag([]byte(old))
	for _, seed := range [][2]string{
		{tag, ""}, {"W/" + tag, ""}, {"*", ""}, {"", "*"}, {`"x", ` + tag, ""},
		{tag + "\n" + tag, ""}, {"", " * "}, {"", `"x"`}, {`"` + strings.Repeat("0", 64) + `"`, ""},
		{tag[1:], ""}, {" " + tag + " ,", ""}, {"", "*\n*"},
	} {
		f.Add(seed[0], seed[1])
	}
	ctx := f.Context()
	f.Fuzz(func(t *testing.T, ifMatch, ifNone string) {
		s := memstore.New()
		if err := s.WriteFile(ctx, "a.md", []byte(old), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		h := resource.New(func(*http.Request) (memtool.Store, bool, error) { return s, true, nil }, nil)
		req := httptest.NewRequest(http.MethodPut, "/v1/file?"+url.Values{"path": {"/memories/a.md"}}.Encode(), strings.NewReader("new"))
		// Each line of a value is one header line, as a client repeats it.
		for k, v := range map[string]string{"If-Match": ifMatch, "If-None-Match": ifNone} {
			if v != "" {
				req.Header[k] = strings.Split(v, "\n")
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		got, err := s.ReadFile(ctx, "a.md", 100)
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, v := range req.Header["If-Match"] {
			for tok := range strings.SplitSeq(v, ",") {
				tok = strings.TrimSpace(tok)
				listed = listed || tok == tag || tok == "*"
			}
		}
		switch {
		case string(got) == old:
			if w.Code < 300 {
				t.Fatalf("If-Match %q, If-None-Match %q: %d, but the file is unchanged", ifMatch, ifNone, w.Code)
			}
		case string(got) == "new":
			_, match := req.Header["If-Match"]
			_, none := req.Header["If-None-Match"]
			if none || match && !listed || w.Code != http.StatusOK {
				t.Fatalf("If-Match %q, If-None-Match %q: written (%d)", ifMatch, ifNone, w.Code)
			}
		default:
			t.Fatalf("the file holds %q", got)
		}
	})
}
