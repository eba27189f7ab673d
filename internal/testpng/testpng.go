// Package testpng gives the tests a small, real PNG image: what an image
// view of the memory tool must answer with as image content.
package testpng

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
)

// PNG returns a new 2×2 PNG image with one red pixel.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding into memory cannot fail
	}
	return buf.Bytes()
}
