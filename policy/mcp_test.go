package policy_test

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

func TestMCPSectionErrors(t *testing.T) {
	checkParseErrors(t, []parseErrorCase{
		{"max_tools", "mcp:\n  max_tools: 500\n",
			[]string{`policy.yaml:2:14: mcp.max_tools: must be between 0 and 128, got 500`}},
		{"server name", "mcp:\n  servers:\n    My__Notes: {command: x}\n",
			[]string{`policy.yaml:3:5: mcp.servers.My__Notes: "My__Notes": a server name is 1 to 24 lower-case letters, digits and -, starting with a letter or digit (it prefixes its tools: My__Notes__tool)`}},
		{"stdio without command", "mcp:\n  servers:\n    notes:\n      tools: [\"*\"]\n",
			[]string{`policy.yaml:4:7: mcp.servers.notes: a stdio server needs a command (or write url: for an HTTP server)`}},
		{"transport enum", "mcp:\n  servers:\n    notes:\n      transport: sse\n      url: https://x.org/mcp\n",
			[]string{`policy.yaml:4:18: mcp.servers.notes.transport: "sse" is not one of stdio, http`}},
		{"bad url", "mcp:\n  servers:\n    notes: {url: \"ftp://x.org\"}\n",
			[]string{`policy.yaml:3:18: mcp.servers.notes.url: "ftp://x.org" is not an http:// or https:// URL`}},
		{"credentials in url", "mcp:\n  servers:\n    notes: {url: \"https://u:p@x.org/mcp\"}\n",
			[]string{`policy.yaml:3:18: mcp.servers.notes.url: put no credentials in the URL; use token_secret`}},
		{"token for stdio", "mcp:\n  servers:\n    notes: {command: x, token_secret: T}\n",
			[]string{`policy.yaml:3:39: mcp.servers.notes.token_secret: a bearer token is for HTTP servers; give a stdio server secrets with secret_env`}},
		{"command for http", "mcp:\n  servers:\n    notes: {transport: http, url: \"https://x.org\", command: y}\n",
			[]string{`policy.yaml:3:12: mcp.servers.notes: command, args, env and secret_env are for stdio servers`}},
		{"tool name", "mcp:\n  servers:\n    notes: {command: x, tools: [a.b]}\n",
			[]string{`policy.yaml:3:33: mcp.servers.notes.tools[0]: "a.b": a tool name is letters, digits, _ and - (or "*" for all)`}},
		{"star and names", "mcp:\n  servers:\n    notes: {command: x, tools: [\"*\", a]}\n",
			[]string{`policy.yaml:3:32: mcp.servers.notes.tools: "*" already allows every tool; list names or "*", not both`}},
		{"impact value", "mcp:\n  servers:\n    notes: {command: x, tools: [a], impact: {a: writes}}\n",
			[]string{`policy.yaml:3:49: mcp.servers.notes.impact.a: "writes" is not one of read, write, did you mean "write"?`}},
		{"impact of a tool not allowed", "mcp:\n  servers:\n    notes: {command: x, tools: [a], impact: {b: read}}\n",
			[]string{`policy.yaml:3:46: mcp.servers.notes.impact.b: "b" is not in tools, so the model never sees it`}},
		{"secret_env name", "mcp:\n  servers:\n    notes: {command: x, secret_env: {KEY: \"my-secret\"}}\n",
			[]string{`policy.yaml:3:43: mcp.servers.notes.secret_env.KEY: "my-secret": write the NAME of KAIROS_SECRET_<NAME> (letters, digits, _)`}},
		{"call timeout", "mcp:\n  call_timeout: PT0S\n",
			[]string{`policy.yaml:2:17: mcp.call_timeout: must be longer than zero`}},
		{"unknown key", "mcp:\n  servers:\n    notes: {command: x, tool: [a]}\n",
			[]string{`policy.yaml:3:25: unknown key "tool" in mcp.servers.notes, did you mean "tools"?`}},
	})
}

// TestMCPThreeLines: an operator adds a server with three lines.
func TestMCPThreeLines(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte("mcp:\n  servers:\n    notes: {command: notes-mcp, tools: [\"*\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := p.MCP.Servers["notes"]
	if s.TransportKind() != kairos.MCPStdio || !s.Allows("anything") || s.ImpactOf("anything") != kairos.ImpactWrite {
		t.Errorf("server %+v", s)
	}
	if p.MCP.MaxTools != kairos.DefaultMCPMaxTools || p.MCP.CallTimeout.Approx().Seconds() != 30 {
		t.Errorf("defaults lost: %+v", p.MCP)
	}
	p, err = policy.Parse("policy.yaml", []byte("mcp:\n  servers:\n    web: {url: \"https://x.org/mcp\", tools: [fetch], impact: {fetch: read}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := p.MCP.Servers["web"]; s.TransportKind() != kairos.MCPHTTP || s.Allows("other") || s.ImpactOf("fetch") != kairos.ImpactRead {
		t.Errorf("server %+v", s)
	}
	if got, want := policy.Summary(p), "MCP: web (http, 1 tools); at most 32 tools offered, calls time out after PT30S"; !strings.Contains(got, want) {
		t.Errorf("summary lacks %q:\n%s", want, got)
	}
}
