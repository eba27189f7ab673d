package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// mustRefuse reads data, one valid JSON value, with encoding/json alone
// and says why checkMessage must refuse it, or "" if nothing does: what
// checkMessage's comment lists, found without its code.
func mustRefuse(data []byte) string {
	var batch []json.RawMessage
	if bytes.TrimSpace(data)[0] == '[' {
		if json.Unmarshal(data, &batch) != nil || len(batch) == 0 {
			return "an empty batch"
		}
	} else {
		batch = []json.RawMessage{data}
	}
	ids := map[string]bool{}
	for _, raw := range batch {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return "not an object"
		}
		var method string
		json.Unmarshal(m["method"], &method)
		dec := json.NewDecoder(bytes.NewReader(raw))
		if why := sameKeys(dec, nil, method == "tools/call"); why != "" {
			return why
		}
		var version string
		if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
			return "jsonrpc is not 2.0"
		}
		id, ok := m["id"]
		if !ok || string(id) == "null" {
			continue
		}
		var key string
		if id[0] == '"' {
			var s string
			json.Unmarshal(id, &s)
			key = "s" + s
		} else {
			n, err := strconv.ParseInt(string(id), 10, 64)
			if !integer.Match(id) || err != nil || n > 1<<53 || n < -(1<<53) {
				return fmt.Sprintf("id %s", id)
			}
			key = "n" + strconv.FormatInt(n, 10)
		}
		if ids[key] {
			return fmt.Sprintf("id %s twice in the batch", id)
		}
		ids[key] = true
	}
	return ""
}

var integer = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// sameKeys reads the next value of dec and names an object in it with two
// keys equal up to case, or gives ""; a tools/call's params.arguments
// are not looked into.
func sameKeys(dec *json.Decoder, path []string, toolCall bool) string {
	tok, _ := dec.Token()
	switch tok {
	case json.Delim('{'):
		var keys []string
		for dec.More() {
			t, _ := dec.Token()
			key := t.(string)
			for _, k := range keys {
				if strings.EqualFold(k, key) {
					return fmt.Sprintf("keys %q and %q at %q", k, key, path)
				}
			}
			keys = append(keys, key)
			at := append(path[:len(path):len(path)], key)
			if toolCall && len(at) == 2 && at[0] == "params" && at[1] == "arguments" {
				var skip json.RawMessage
				dec.Decode(&skip)
			} else if why := sameKeys(dec, at, toolCall); why != "" {
				return why
			}
		}
		dec.Token()
	case json.Delim('['):
		for dec.More() {
			if why := sameKeys(dec, append(path[:len(path):len(path)], "[]"), toolCall); why != "" {
				return why
			}
		}
		dec.Token()
	}
	return ""
}
