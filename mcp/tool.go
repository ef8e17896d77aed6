package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kairos-agent/kairos"
)

// maxResultText bounds the text of one result given to the model.
const maxResultText = 16 << 10

// tool is one allowed tool of a ready server, as the agent sees it.
type tool struct {
	srv     *server
	remote  remoteTool
	impact  string
	timeout time.Duration
}

var _ kairos.ExternalTool = (*tool)(nil)

func (t *tool) Spec() kairos.ToolSpec { return t.remote.spec }

func (t *tool) Server() string { return t.srv.name }

func (t *tool) OfferedAction() string {
	if t.impact == kairos.ImpactRead {
		return kairos.ActionMCPRead
	}
	return kairos.ActionMCPWrite
}

// Action is mcp.read for a tool the policy marks read, else mcp.write,
// which is impactful.
func (t *tool) Action(ctx context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	args, err := arguments(inv.Arguments)
	if err != nil {
		return kairos.ToolAction{}, err
	}
	act := kairos.ToolAction{Name: t.OfferedAction(), Capability: kairos.CapMCP,
		Summary: sentence(t.srv.name, t.remote.remote, t.remote.spec.Description, args)}
	act.Target, act.TargetLabel = grantTarget(t.remote.spec.Name, args)
	if act.Name == kairos.ActionMCPWrite {
		act.Impactful = true
		act.Reason = fmt.Sprintf("%s may change something through the MCP server %q", t.remote.remote, t.srv.name)
	}
	return act, nil
}

func arguments(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "arguments must be a JSON object")
	}
	return args, nil
}

// Call calls the tool under the turn's context and the call timeout. Its
// result is always tainted: it comes from another program.
func (t *tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	start := time.Now()
	res, outcome, err := t.call(ctx, inv)
	res = boundResult(t.srv.m.scrubResult(res))
	if o := t.srv.m.cfg.Observer; o != nil {
		o.MCPCall(t.srv.name, t.remote.remote, outcome, time.Since(start))
	}
	return res, err
}

func (t *tool) call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, string, error) {
	args, err := arguments(inv.Arguments)
	if err != nil {
		return nil, "invalid", err
	}
	cs := t.srv.current()
	if cs == nil {
		return nil, "unavailable", kairos.Errorf(kairos.EUNAVAILABLE, "the MCP server %q is not connected right now; answer without %s", t.srv.name, t.remote.spec.Name)
	}
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: t.remote.remote, Arguments: args})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, "canceled", fmt.Errorf("call %s: %w", t.remote.spec.Name, ctx.Err())
	case cctx.Err() != nil:
		t.srv.log.Warn("mcp call timed out", "tool", t.remote.remote, "timeout", t.timeout)
		return nil, "timeout", kairos.Errorf(kairos.EUNAVAILABLE, "the MCP server %q did not answer %s within %s; do not retry it in this turn", t.srv.name, t.remote.spec.Name, t.timeout)
	case errors.As(err, new(*jsonrpc.Error)):
		// The server answered with an error (unknown tool, bad
		// arguments): its words are untrusted, so they go back fenced.
		return untrusted(map[string]any{"success": false, "error": kairos.Clip(err.Error(), 1000)}), "error", nil
	default:
		// No answer: the process exited or the connection broke.
		t.srv.log.Warn("mcp server connection lost during a call", "tool", t.remote.remote, "err", t.srv.clean(err))
		go t.srv.broken(cs)
		return nil, "crashed", kairos.Errorf(kairos.EUNAVAILABLE, "the MCP server %q stopped during the call to %s (it is being restarted); do not retry it in this turn", t.srv.name, t.remote.spec.Name)
	}
	out := map[string]any{"success": !res.IsError}
	if content := contentJSON(res.Content); len(content) > 0 {
		out["content"] = content
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && len(b) <= maxResultText {
			out["structured"] = json.RawMessage(b)
		} else {
			out["structured_omitted"] = "larger than the result limit"
		}
	}
	outcome := "ok"
	if res.IsError {
		outcome = "tool_error"
	}
	return untrusted(out), outcome, nil
}

func untrusted(v map[string]any) *kairos.ToolResult {
	b, _ := json.Marshal(v)
	return &kairos.ToolResult{Content: b, Tainted: true}
}

// contentJSON renders a result's content blocks for the model: text in
// full (up to maxResultText over all blocks), other kinds described.
func contentJSON(cs []sdk.Content) []map[string]any {
	var out []map[string]any
	left := maxResultText
	for _, c := range cs {
		switch c := c.(type) {
		case *sdk.TextContent:
			text := c.Text
			if len(text) > left {
				text = kairos.Clip(text, max(left, 0)) + " [truncated]"
			}
			left -= len(text)
			out = append(out, map[string]any{"type": "text", "text": text})
		case *sdk.ImageContent:
			out = append(out, map[string]any{"type": "image", "mime_type": c.MIMEType, "bytes": len(c.Data)}) // the SDK decoded the base64
		case *sdk.AudioContent:
			out = append(out, map[string]any{"type": "audio", "mime_type": c.MIMEType})
		case *sdk.ResourceLink:
			out = append(out, map[string]any{"type": "resource_link", "uri": c.URI, "name": kairos.Clip(c.Name, 200)})
		case *sdk.EmbeddedResource:
			r := map[string]any{"type": "resource"}
			if c.Resource != nil {
				r["uri"] = c.Resource.URI
				if c.Resource.Text != "" {
					text := c.Resource.Text
					if len(text) > left {
						text = kairos.Clip(text, max(left, 0)) + " [truncated]"
					}
					left -= len(text)
					r["text"] = text
				}
			}
			out = append(out, r)
		default:
			out = append(out, map[string]any{"type": "unsupported"})
		}
	}
	return out
}
