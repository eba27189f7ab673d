package testpng

import (
	"bytes"
	"image/png"
	"net/http"
	"testing"
)

// TestPNG: the bytes decode as a 2×2 PNG and are sniffed as one.
func TestPNG(t *testing.T) {
	b := PNG()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != 2 || r.Dy() != 2 {
		t.Errorf("bounds %v, want 2×2", r)
	}
	if ct := http.DetectContentType(b); ct != "image/png" {
		t.Errorf("sniffed as %q", ct)
	}
}
