package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/mcp"
)

// BenchmarkTools is the per-step cost of listing the MCP tools (the agent
// asks at every model call).
func BenchmarkTools(b *testing.B) {
	_, url := httpServer(b, "")
	m := mcp.New(mcp.Config{})
	defer m.Close()
	p := policyWith(map[string]kairos.MCPServer{"a": {URL: url, Tools: []string{"*"}}, "b": {URL: url, Tools: []string{"echo"}}})
	m.Apply(p)
	ctx := context.Background()
	if err := m.Wait(ctx, p, func(ss []mcp.ServerStatus) bool {
		return ss[0].State == mcp.StateReady && ss[1].State == mcp.StateReady
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(m.Tools(p)) != 7 {
			b.Fatal("tools")
		}
	}
}

// BenchmarkCallHTTP is one read call over streamable HTTP (loopback).
func BenchmarkCallHTTP(b *testing.B) {
	_, url := httpServer(b, "")
	m := mcp.New(mcp.Config{})
	defer m.Close()
	p := policyWith(map[string]kairos.MCPServer{"a": {URL: url, Tools: []string{"echo"}, Impact: map[string]string{"echo": "read"}}})
	m.Apply(p)
	ctx := context.Background()
	if err := m.Wait(ctx, p, func(ss []mcp.ServerStatus) bool { return ss[0].State == mcp.StateReady }); err != nil {
		b.Fatal(err)
	}
	tl := m.Tools(p)[0]
	inv := &kairos.ToolInvocation{Name: "a__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tl.Call(ctx, inv); err != nil {
			b.Fatal(err)
		}
	}
}
