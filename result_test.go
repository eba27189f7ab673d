package memtool

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzResultJSON holds Result.MarshalJSON, which encodes text results by
// hand, to the bytes json.Marshal gives for the same answer: escapes,
// HTML characters, U+2028/U+2029 and invalid UTF-8 included.
func FuzzResultJSON(f *testing.F) {
	for _, s := range []string{
		"", "plain", "Here's the content of /memories/a.md with line numbers:\n     1\tx",
		"quote \" backslash \\ slash /", "<script>&amp;</script>", "\x00\x01\x1f\x7f\b\f\r\t\n",
		"é ü 日本 🎉", "\u2028\u2029", "\xff\xfe bad \xc3", "\xed\xa0\x80 surrogate", "end\xe2\x80",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, isError bool) {
		r := Result{Text: text, IsError: isError}
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(struct {
			IsError bool   `json:"is_error"`
			Content string `json:"content"`
		}{isError, text})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("MarshalJSON of %q:\n got %s\nwant %s", text, got, want)
		}
	})
}

// An image result is still encoded as one image block.
func TestResultJSONImage(t *testing.T) {
	r := Result{Image: &Image{MediaType: "image/png", Data: []byte("\x89PNG")}}
	got, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"is_error":false,"content":[{"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"},"type":"image"}]}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
