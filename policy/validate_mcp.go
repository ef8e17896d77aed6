package policy

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// MCP limits and allowed values.
var (
	MCPTransports = []string{kairos.MCPStdio, kairos.MCPHTTP} // mcp.servers.<name>.transport
	MCPImpacts    = []string{kairos.ImpactRead, kairos.ImpactWrite}
)

// MaxMCPTools bounds mcp.max_tools: every tool's schema costs prompt tokens.
const MaxMCPTools = 128

// maxToolName is the longest tool name chat-completions APIs accept.
const maxToolName = 64

var (
	mcpServerRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,23}$`)
	mcpToolRe   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	envNameRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	secretRe    = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

func validateMCP(c *checker, m *kairos.MCPPolicy) {
	if m.MaxTools < 0 || m.MaxTools > MaxMCPTools {
		c.add("mcp.max_tools", "must be between 0 and %d, got %d", MaxMCPTools, m.MaxTools)
	}
	c.dur("mcp.call_timeout", m.CallTimeout, true)
	for _, name := range sortedKeys(m.Servers) {
		validateMCPServer(c, "mcp.servers."+name, name, m.Servers[name])
	}
}

func validateMCPServer(c *checker, path, name string, s kairos.MCPServer) {
	if !mcpServerRe.MatchString(name) {
		c.addKey(path, "%q: a server name is 1 to 24 lower-case letters, digits and -, starting with a letter or digit (it prefixes its tools: %s)", name, kairos.MCPToolName(name, "tool"))
	}
	if s.Transport != "" {
		c.enum(path+".transport", s.Transport, MCPTransports)
	}
	switch s.TransportKind() {
	case kairos.MCPStdio:
		if s.Command == "" {
			c.add(path, "a stdio server needs a command (or write url: for an HTTP server)")
		}
		if s.URL != "" {
			c.add(path+".url", "a stdio server has no url (transport: http for an HTTP server)")
		}
		if s.TokenSecret != "" {
			c.add(path+".token_secret", "a bearer token is for HTTP servers; give a stdio server secrets with secret_env")
		}
	case kairos.MCPHTTP:
		if s.URL == "" {
			c.add(path, "an HTTP server needs a url")
		} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.add(path+".url", "%q is not an http:// or https:// URL", s.URL)
		} else if u.User != nil {
			c.add(path+".url", "put no credentials in the URL; use token_secret")
		}
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || len(s.SecretEnv) > 0 {
			c.add(path, "command, args, env and secret_env are for stdio servers")
		}
	}
	if s.TokenSecret != "" && !secretRe.MatchString(s.TokenSecret) {
		c.add(path+".token_secret", "%q: write the NAME of KAIROS_SECRET_<NAME> (letters, digits, _)", s.TokenSecret)
	}
	for _, k := range sortedKeys(s.Env) {
		if !envNameRe.MatchString(k) {
			c.addKey(path+".env."+k, "%q is not an environment variable name", k)
		}
	}
	for _, k := range sortedKeys(s.SecretEnv) {
		if !envNameRe.MatchString(k) {
			c.addKey(path+".secret_env."+k, "%q is not an environment variable name", k)
		}
		if v := s.SecretEnv[k]; !secretRe.MatchString(v) {
			c.add(path+".secret_env."+k, "%q: write the NAME of KAIROS_SECRET_<NAME> (letters, digits, _)", v)
		}
	}
	for i, t := range s.Tools {
		p := fmt.Sprintf("%s.tools[%d]", path, i)
		switch {
		case t == "*":
		case !mcpToolRe.MatchString(t):
			c.add(p, "%q: a tool name is letters, digits, _ and - (or \"*\" for all)", t)
		case len(kairos.MCPToolName(name, t)) > maxToolName:
			c.add(p, "%q: %s is longer than %d characters, the most models accept", t, kairos.MCPToolName(name, t), maxToolName)
		}
	}
	for _, t := range sortedKeys(s.Impact) {
		p := path + ".impact." + t
		c.enum(p, s.Impact[t], MCPImpacts)
		if !s.Allows(t) {
			c.addKey(p, "%q is not in tools, so the model never sees it", t)
		}
	}
	if !s.CallTimeout.IsZero() {
		c.dur(path+".call_timeout", s.CallTimeout, true)
	}
	if slices.Contains(s.Tools, "*") && len(s.Tools) > 1 {
		c.add(path+".tools", `"*" already allows every tool; list names or "*", not both`)
	}
}

// mcpSummary is /policy's MCP line, empty when no server is listed (the
// summary of a policy without MCP is unchanged).
func mcpSummary(m kairos.MCPPolicy) string {
	if len(m.Servers) == 0 {
		return ""
	}
	var parts []string
	for _, name := range sortedKeys(m.Servers) {
		s := m.Servers[name]
		tools := "no tools allowed"
		switch {
		case s.Disabled:
			tools = "disabled"
		case slices.Contains(s.Tools, "*"):
			tools = "all tools"
		case len(s.Tools) > 0:
			tools = fmt.Sprintf("%d tools", len(s.Tools))
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", name, s.TransportKind(), tools))
	}
	return fmt.Sprintf("MCP: %s; at most %d tools offered, calls time out after %s", strings.Join(parts, ", "), m.MaxTools, m.CallTimeout)
}
