package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kairos-agent/kairos"
)

// maxResultBytes bounds the JSON of one result given to the model, over
// everything a server sends: text is already held to maxResultText and
// structured content to as much again, but a server may also send any
// number of image, audio or link blocks, or links with megabyte URIs.
// A result past the bound keeps its start, as text, and says so.
const maxResultBytes = 48 << 10

// boundResult holds a result to maxResultBytes.
func boundResult(res *kairos.ToolResult) *kairos.ToolResult {
	if res == nil || len(res.Content) <= maxResultBytes {
		return res
	}
	var head struct {
		Success *bool `json:"success"`
	}
	_ = json.Unmarshal(res.Content, &head)
	out := map[string]any{
		"truncated": fmt.Sprintf("the result was %d bytes, more than the %d KiB limit; only its start is given", len(res.Content), maxResultBytes>>10),
		// Quoting at most doubles it (quotes and backslashes; HTML is
		// not escaped), so the whole stays under the bound.
		"result_start": kairos.Clip(string(res.Content), maxResultBytes/2-1024),
	}
	if head.Success != nil {
		out["success"] = *head.Success
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return &kairos.ToolResult{Content: bytes.TrimSpace(b.Bytes()), Tainted: true}
}
