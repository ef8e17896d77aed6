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

var _ kairos.ScopedToolRegistry = (*Registry)(nil)

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
func (r *Registry) Tools(p *kairos.Policy) []kairos.Tool { return r.ToolsFor(p, kairos.ToolScope{}) }

// ToolsFor returns the tools enabled by p for the scope's user: the
// built-in ones, then each source's (a scoped source, the skills, gets
// the scope). features.self_update: false removes `skill` and every
// skill__ tool, whatever source offers them.
func (r *Registry) ToolsFor(p *kairos.Policy, sc kairos.ToolScope) []kairos.Tool {
	ts := r.builtin(p)
	for _, src := range r.sources {
		var extra []kairos.Tool
		if s, ok := src.(kairos.ScopedToolRegistry); ok {
			extra = s.ToolsFor(p, sc)
		} else {
			extra = src.Tools(p)
		}
		if p != nil && !p.Features.SelfUpdate {
			extra = slices.DeleteFunc(slices.Clone(extra), func(t kairos.Tool) bool { return kairos.IsSkillTool(t.Spec().Name) })
		}
		if len(extra) > 0 {
			ts = append(slices.Clip(ts), extra...)
		}
	}
	return ts
}

func (r *Registry) builtin(p *kairos.Policy) []kairos.Tool {
	if p == nil || (len(p.Agent.DisabledTools) == 0 && p.Schedules.Enabled && p.Features.SelfUpdate) {
		return r.tools
	}
	out := make([]kairos.Tool, 0, len(r.tools))
	for _, t := range r.tools {
		name := t.Spec().Name
		if name == "schedule" && !p.Schedules.Enabled {
			continue // schedules.enabled: false
		}
		if kairos.IsSkillTool(name) && !p.Features.SelfUpdate {
			continue // features.self_update: false
		}
		if !slices.Contains(p.Agent.DisabledTools, name) {
			out = append(out, t)
		}
	}
	return out
}
