package obs

import "time"

func (m *Metrics) declareMCP() {
	m.declare("kairos_mcp_calls_total", "counter", "MCP tool calls by server, tool and outcome (ok, tool_error, error, timeout, crashed, unavailable, canceled, invalid).", nil)
	m.declare("kairos_mcp_call_seconds", "histogram", "MCP tool call durations by server.", latencyBuckets)
}

// MCPCall counts one call of an MCP server's tool.
func (m *Metrics) MCPCall(server, tool, outcome string, d time.Duration) {
	m.add("kairos_mcp_calls_total", 1, "server", server, "tool", tool, "outcome", outcome)
	m.observe("kairos_mcp_call_seconds", d.Seconds(), "server", server)
}
