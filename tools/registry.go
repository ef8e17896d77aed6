package tools

import (
	"slices"

	"github.com/kairos-agent/kairos"
)

// Registry offers the tools the policy enables, in a fixed order.
type Registry struct {
	tools   []kairos.Tool
	sources []kairos.ToolRegistry // tools that come and go (MCP servers), after the built-in ones
}

var _ kairos.ToolRegistry = (*Registry)(nil)

// NewRegistry returns a registry of the given tools (nil ones are skipped).
func NewRegistry(ts ...kairos.Tool) *Registry {
	r := &Registry{}
	for _, t := range ts {
		if t != nil {
			r.tools = append(r.tools, t)
		}
	}
	return r
}

// WithSource adds a source of tools that change at run time (the MCP
// servers' tools); its tools follow the built-in ones.
func (r *Registry) WithSource(src kairos.ToolRegistry) *Registry {
	if src != nil {
		r.sources = append(r.sources, src)
	}
	return r
}

// Tools returns the tools enabled by p. A tool listed in
// agent.disabled_tools is absent: the model neither sees nor can call it.
func (r *Registry) Tools(p *kairos.Policy) []kairos.Tool {
	ts := r.builtin(p)
	for _, src := range r.sources {
		if extra := src.Tools(p); len(extra) > 0 {
			ts = append(slices.Clip(ts), extra...)
		}
	}
	return ts
}

func (r *Registry) builtin(p *kairos.Policy) []kairos.Tool {
	if p == nil || (len(p.Agent.DisabledTools) == 0 && p.Schedules.Enabled) {
		return r.tools
	}
	out := make([]kairos.Tool, 0, len(r.tools))
	for _, t := range r.tools {
		name := t.Spec().Name
		if name == "schedule" && !p.Schedules.Enabled {
			continue // schedules.enabled: false
		}
		if !slices.Contains(p.Agent.DisabledTools, name) {
			out = append(out, t)
		}
	}
	return out
}
