package claudetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

func (c ToolUse) name() string {
	if c.Name == "" {
		return "memory"
	}
	return c.Name
}

// content returns the turn's content blocks; turnNo numbers default ids.
func (t Turn) content(turnNo int) []map[string]any {
	var blocks []map[string]any
	if t.Compaction != "" {
		blocks = append(blocks, map[string]any{"type": "compaction", "content": t.Compaction})
	}
	if t.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%02d_%d", turnNo, i+1)
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": c.name(), "input": json.RawMessage(c.Input)})
	}
	return blocks
}

func message(id, model string, content []map[string]any, stop string) map[string]any {
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 20},
	}
}

// streamMessage writes the reply as the API streams it: message_start, each
// block as start, deltas (split in two, to exercise accumulation) and stop,
// then message_delta and message_stop. With hang it stops after the text
// block's first delta and calls wait.
func streamMessage(w http.ResponseWriter, id, model string, content []map[string]any, stop string, hang bool, wait func()) {
	flusher, _ := w.(http.Flusher)
	event := func(v map[string]any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := message(id, model, []map[string]any{}, "")
	start["stop_reason"] = nil
	event(map[string]any{"type": "message_start", "message": start})
	for i, block := range content {
		switch block["type"] {
		case "text":
			text := block["text"].(string)
			event(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			a, b := halves(text)
			event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": a}})
			if hang {
				wait()
				return
			}
			if b != "" {
				event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b}})
			}
		case "tool_use":
			event(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			var compact bytes.Buffer
			_ = json.Compact(&compact, block["input"].(json.RawMessage))
			a, b := halves(compact.String())
			for _, part := range []string{a, b} {
				if part != "" {
					event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
				}
			}
		}
		event(map[string]any{"type": "content_block_stop", "index": i})
	}
	if hang {
		wait()
		return
	}
	event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	event(map[string]any{"type": "message_stop"})
}

// halves splits s in two at a character boundary.
func halves(s string) (string, string) {
	r := []rune(s)
	return string(r[:len(r)/2]), string(r[len(r)/2:])
}

func writeError(w http.ResponseWriter, e *Error) {
	status, typ := e.Status, e.Type
	if status == 0 {
		status = http.StatusBadRequest
	}
	if typ == "" {
		typ = "invalid_request_error"
	}
	body := map[string]any{"type": typ, "message": e.Message}
	if e.Code != "" {
		body["details"] = map[string]string{"error_code": e.Code}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": body})
}
