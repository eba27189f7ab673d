package memtool

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
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
// {"is_error":bool,"content":string-or-blocks}, the bytes json.Marshal
// gives.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Image != nil {
		return json.Marshal(struct {
			IsError bool `json:"is_error"`
			Content any  `json:"content"`
		}{r.IsError, r.Content()})
	}
	// Text, the usual answer, is encoded by hand into one buffer, large
	// enough for the escapes of a typical view (a newline and a tab per
	// line), with room left for the newline exec writes after it: what
	// json.Marshal gives, without its reflection and the copy out of its
	// own buffer.
	b := make([]byte, 0, len(`{"is_error":false,"content":""}`)+len(r.Text)+len(r.Text)/8+8)
	if r.IsError {
		b = append(b, `{"is_error":true,"content":`...)
	} else {
		b = append(b, `{"is_error":false,"content":`...)
	}
	return append(appendJSONString(b, r.Text), '}'), nil
}

// appendJSONString appends s as encoding/json encodes a string: <, > and
// & escaped as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, and
// each invalid UTF-8 byte replaced with \ufffd. FuzzResultJSON holds it to
// json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

func errorResult(msg string) Result { return Result{Text: "Error: " + msg, IsError: true} }
