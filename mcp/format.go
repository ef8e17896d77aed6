package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/kairos-agent/kairos"
)

// FormatStatus renders servers as plain text, one server per paragraph:
//
//	notes (stdio): ready, 3 tools offered
//	  notes__search  read
//	  notes__add     write
//	  notes__delete  write  (not allowed)
func FormatStatus(ss []ServerStatus) string {
	if len(ss) == 0 {
		return "No MCP servers are configured (policy section mcp)."
	}
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteString("\n")
		}
		offered := 0
		for _, t := range s.Tools {
			if t.Offered {
				offered++
			}
		}
		fmt.Fprintf(&b, "%s (%s): %s", s.Name, s.Transport, s.State)
		if s.State == StateReady {
			fmt.Fprintf(&b, ", %d of %d tools offered", offered, len(s.Tools))
		}
		if s.Restarts > 0 {
			fmt.Fprintf(&b, ", %d restarts", s.Restarts)
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "\n  last error: %s", s.Error)
		}
		b.WriteString("\n")
		for _, t := range s.Tools {
			note := ""
			switch {
			case t.Skipped != "":
				note = "  (skipped: " + t.Skipped + ")"
			case !t.Allowed:
				note = "  (not allowed)"
			case !t.Offered:
				note = "  (over mcp.max_tools)"
			}
			fmt.Fprintf(&b, "  %s  %s%s\n", t.Name, t.Impact, note)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Report is what Check found on one server.
type Report struct {
	Name      string
	Transport string
	Disabled  bool
	Error     string // the connection or listing failed
	Tools     []ToolReport
}

// ToolReport is one tool a server offers, as the model would see it.
type ToolReport struct {
	Name        string // <server>__<tool>
	Remote      string
	Impact      string
	Allowed     bool
	Skipped     string
	Description string
	Parameters  string // the trimmed schema, JSON
}

// Check connects once to every server p lists (disabled ones are
// reported, not connected), lists their tools and disconnects.
func Check(ctx context.Context, p *kairos.Policy, cfg Config) []Report {
	m := New(cfg)
	defer m.Close()
	var out []Report
	for _, name := range sortedNames(p.MCP.Servers) {
		spec := p.MCP.Servers[name]
		r := Report{Name: name, Transport: spec.TransportKind(), Disabled: spec.Disabled}
		if spec.Disabled {
			out = append(out, r)
			continue
		}
		s := newServer(m, name, spec)
		cs, err := s.connect(ctx)
		if err != nil {
			r.Error = err.Error()
			out = append(out, r)
			continue
		}
		for _, rt := range s.tools {
			r.Tools = append(r.Tools, ToolReport{Name: rt.spec.Name, Remote: rt.remote, Impact: spec.ImpactOf(rt.remote),
				Allowed: spec.Allows(rt.remote), Description: rt.spec.Description, Parameters: string(rt.spec.Parameters)})
		}
		for _, sk := range s.skipped {
			r.Tools = append(r.Tools, ToolReport{Name: kairos.MCPToolName(name, sk[0]), Remote: sk[0], Impact: spec.ImpactOf(sk[0]),
				Allowed: spec.Allows(sk[0]), Skipped: sk[1]})
		}
		closeBounded(cs, s.log)
		s.endProcess()
		s.cancel()
		out = append(out, r)
	}
	return out
}
