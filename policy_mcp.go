package kairos

import (
	"slices"
	"strings"
)

// MCP transports (mcp.servers.<name>.transport).
const (
	MCPStdio = "stdio" // a command Kairos starts, speaking JSON-RPC on stdin/stdout
	MCPHTTP  = "http"  // a streamable HTTP endpoint
)

// Impacts of an MCP tool (mcp.servers.<name>.impact).
const (
	ImpactRead  = "read"  // looks things up: offered like search
	ImpactWrite = "write" // changes something: impactful, approved like memory.forget
)

// MCPToolSep joins a server's name and its tool's name into the name the
// model sees: "notes__search".
const MCPToolSep = "__"

// MCPPolicy is the policy's `mcp` section: the Model Context Protocol
// servers whose tools the model may use. No server is listed by default.
type MCPPolicy struct {
	// MaxTools caps how many MCP tools are offered at once, over all
	// servers (by server name, then tool name); 0 offers none.
	MaxTools int `yaml:"max_tools" json:"max_tools"`
	// CallTimeout (ISO-8601 duration) bounds one tool call; a server that
	// has not answered by then costs the model one error.
	CallTimeout Duration `yaml:"call_timeout" json:"call_timeout"`
	// Servers by name; the name prefixes their tools (<name>__<tool>).
	Servers map[string]MCPServer `yaml:"servers" json:"servers"`
}

// MCPServer is one server of the mcp section.
type MCPServer struct {
	// Disabled keeps the server listed but not connected: its tools are
	// absent.
	Disabled bool `yaml:"disabled" json:"disabled"`
	// Transport is MCPStdio or MCPHTTP; empty means stdio when Command is
	// set and http when URL is.
	Transport string `yaml:"transport" json:"transport"`
	// Command and Args start a stdio server. It gets a clean environment
	// (PATH, HOME, LANG, TMPDIR) plus Env and SecretEnv, never Kairos's own
	// variables.
	Command string            `yaml:"command" json:"command"`
	Args    []string          `yaml:"args" json:"args"`
	Env     map[string]string `yaml:"env" json:"env"`
	// SecretEnv sets environment variables of a stdio server from secrets:
	// VARIABLE → NAME of KAIROS_SECRET_<NAME>.
	SecretEnv map[string]string `yaml:"secret_env" json:"secret_env"`
	// URL is a streamable HTTP server's endpoint.
	URL string `yaml:"url" json:"url"`
	// TokenSecret names the secret (KAIROS_SECRET_<NAME>) sent as a bearer
	// token to an HTTP server.
	TokenSecret string `yaml:"token_secret" json:"token_secret"`
	// Tools is the allow-list of the server's tools; none by default,
	// ["*"] for all.
	Tools []string `yaml:"tools" json:"tools"`
	// Impact says per tool whether it reads or writes; a tool not listed
	// is a write tool.
	Impact map[string]string `yaml:"impact" json:"impact"`
	// CallTimeout overrides mcp.call_timeout for this server.
	CallTimeout Duration `yaml:"call_timeout" json:"call_timeout"`
}

// MCP defaults.
const (
	DefaultMCPMaxTools    = 32
	DefaultMCPCallTimeout = "PT30S"
)

// DefaultMCPPolicy returns the built-in mcp section: no servers.
func DefaultMCPPolicy() MCPPolicy {
	return MCPPolicy{MaxTools: DefaultMCPMaxTools, CallTimeout: MustDuration(DefaultMCPCallTimeout)}
}

// TransportKind is the server's transport, inferred when not written.
func (s MCPServer) TransportKind() string {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.URL != "" && s.Command == "":
		return MCPHTTP
	}
	return MCPStdio
}

// Allows reports whether the allow-list lets the model see the tool.
func (s MCPServer) Allows(tool string) bool {
	return slices.Contains(s.Tools, "*") || slices.Contains(s.Tools, tool)
}

// ImpactOf is the tool's impact: what the policy says, else write.
func (s MCPServer) ImpactOf(tool string) string {
	if s.Impact[tool] == ImpactRead {
		return ImpactRead
	}
	return ImpactWrite
}

// MCPToolName is the name the model sees for a server's tool.
func MCPToolName(server, tool string) string { return server + MCPToolSep + tool }

// SplitMCPToolName splits "<server>__<tool>"; ok is false for other names.
func SplitMCPToolName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, MCPToolSep)
	return server, tool, ok && server != "" && tool != ""
}
