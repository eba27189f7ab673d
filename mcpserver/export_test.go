package mcpserver

import (
	"encoding/json"
	"strings"
)

// ToolInput is the memory tool input the server makes of a call of tool
// with args.
func ToolInput(tool string, args json.RawMessage) []byte {
	return toolInput(strings.TrimPrefix(tool, "memory_"), args)
}
