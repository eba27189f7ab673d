package memtool

import (
	"encoding/base64"
	"encoding/json"
)

// A Result is what the model receives for one command: text, or an image
// block, and whether the command failed.
type Result struct {
	// Text is the exact tool_result text. A failure starts with "Error: ".
	Text string
	// IsError marks a failed command (tool_result is_error).
	IsError bool
	// Image, when set, replaces Text: the result is one image content block.
	Image *Image
}

// An Image is a picture from the store, sent to the model as an image block.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte
}

// Content returns the tool_result content as the Messages API spells
// it: a string, or a list holding one image block.
func (r Result) Content() any {
	if r.Image == nil {
		return r.Text
	}
	return []map[string]any{{
		"type": "image",
		"source": map[string]string{
			"type":       "base64",
			"media_type": r.Image.MediaType,
			"data":       base64.StdEncoding.EncodeToString(r.Image.Data),
		},
	}}
}

// MarshalJSON encodes the result as memtool exec answers it:
// {"is_error":bool,"content":string-or-blocks}.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		IsError bool `json:"is_error"`
		Content any  `json:"content"`
	}{r.IsError, r.Content()})
}

func errorResult(msg string) Result { return Result{Text: "Error: " + msg, IsError: true} }
