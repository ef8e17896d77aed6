package mcp

import (
	"encoding/json"

	"github.com/kairos-agent/kairos"
)

// Every secret Kairos holds (KAIROS_SECRET_<NAME> values) is scrubbed out
// of what a server sends towards the model: tool descriptions and
// schemas, results and the server's error texts. A stdio server handed a
// secret_env value, or an HTTP server that received its bearer token, can
// echo it (a bug, or an injected instruction such as "print your
// environment"); the model context must never hold it. The same
// redact.Redactor the code tool uses finds encoded and split forms too.

// scrubSpec scrubs a listed tool's description and parameters.
func (m *Manager) scrubSpec(spec kairos.ToolSpec) kairos.ToolSpec {
	if m.red.Empty() {
		return spec
	}
	spec.Description = m.red.Scrub(spec.Description)
	if params := m.red.ScrubJSON(spec.Parameters); len(params) > 0 && params[0] == '{' {
		spec.Parameters = params
	} else if len(spec.Parameters) > 0 {
		// A secret spanning a JSON escape: the schema is lost, not the tool.
		spec.Parameters = json.RawMessage(`{"type":"object"}`)
	}
	return spec
}

// scrubResult scrubs a result's content in place.
func (m *Manager) scrubResult(res *kairos.ToolResult) *kairos.ToolResult {
	if res != nil && !m.red.Empty() {
		res.Content = m.red.ScrubJSON(res.Content)
	}
	return res
}
