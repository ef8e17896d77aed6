package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/mcp"
)

// A server that floods a result with blocks the text limit does not
// count (links with long URIs, images, audio, structured data as a
// string full of quotes): the model gets one bounded, valid, tainted
// result that says it was cut.
func TestHugeResultIsBounded(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "flood", Version: "test"}, nil)
	srv.AddTool(&sdk.Tool{Name: "flood", Description: "Floods.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var cs []sdk.Content
			for i := range 600 {
				cs = append(cs, &sdk.ResourceLink{URI: "https://example.com/" + strings.Repeat(`"q"<`, 50), Name: "link"},
					&sdk.ImageContent{MIMEType: "image/png", Data: []byte{byte(i)}},
					&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte{1}})
			}
			return &sdk.CallToolResult{Content: cs}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	m, _, obs := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"flood": {URL: ts.URL, Tools: []string{"*"}, Impact: map[string]string{"flood": "read"}}})
	m.Apply(p)
	waitState(t, m, p, "flood", mcp.StateReady)
	res, err := call(t, find(t, m.Tools(p), "flood__flood"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 48<<10 || !json.Valid(res.Content) || !res.Tainted {
		t.Fatalf("result of %d bytes (valid %v, tainted %v), want at most 48 KiB of valid tainted JSON", len(res.Content), json.Valid(res.Content), res.Tainted)
	}
	var got struct {
		Success     bool   `json:"success"`
		Truncated   string `json:"truncated"`
		ResultStart string `json:"result_start"`
	}
	if err := json.Unmarshal(res.Content, &got); err != nil || !got.Success || !strings.Contains(got.Truncated, "limit") || !strings.Contains(got.ResultStart, "resource_link") {
		t.Errorf("bounded result %+v (%v)", got, err)
	}
	if n := obs.get("flood/flood/ok"); n != 1 {
		t.Errorf("calls counted ok: %d", n)
	}
}

// An image block is described to the model by its type and true size
// (the SDK hands over the decoded bytes, not the base64 text).
func TestImageBlockSize(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "img", Version: "test"}, nil)
	srv.AddTool(&sdk.Tool{Name: "shot", Description: "A screenshot.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 1000)}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"img": {URL: ts.URL, Tools: []string{"*"}, Impact: map[string]string{"shot": "read"}}})
	m.Apply(p)
	waitState(t, m, p, "img", mcp.StateReady)
	res, err := call(t, find(t, m.Tools(p), "img__shot"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"bytes":1000,"mime_type":"image/png","type":"image"}`; !strings.Contains(string(res.Content), want) {
		t.Errorf("result %s, want the block %s", res.Content, want)
	}
}
