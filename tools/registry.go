package tools

import (
	"slices"
	"strings"

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

// Tools returns every tool enabled by p. A tool listed in
// agent.disabled_tools, or belonging to a feature that seed 004's flags
// turn off (see Absent), is absent: the model neither sees nor can call it.
func (r *Registry) Tools(p *kairos.Policy) []kairos.Tool {
	return r.ToolsFor(p, kairos.ToolScope{All: true})
}

// ToolsFor returns the tools enabled by p for the scope's user: the
// built-in ones, then each source's (a scoped source, the skills, gets
// the scope). Absent applies to every source's tools too (so
// features.self_update: false removes every skill__ tool, whatever source
// offers them).
//
// Unless sc.All, it returns only the tools the turn is offered (see
// Offered): the rest stay callable, and the agent names them to the model
// (more_tools offers them).
//
// This is the one place a turn's tools are decided: the prompt's tool
// guide, approvals, /tools and the console read its answer. A scheduled
// task's turn gets no tool at all when schedules.tasks_may_use_tools is
// false (skills and MCP tools included).
func (r *Registry) ToolsFor(p *kairos.Policy, sc kairos.ToolScope) []kairos.Tool {
	if p != nil && sc.Turn == kairos.TurnTask && !p.Schedules.TasksMayUseTools {
		return nil
	}
	ts, extra := r.builtin(p), []kairos.Tool(nil)
	for _, src := range r.sources {
		var more []kairos.Tool
		if s, ok := src.(kairos.ScopedToolRegistry); ok {
			more = s.ToolsFor(p, sc)
		} else {
			more = src.Tools(p)
		}
		extra = append(extra, keep(more, p)...)
	}
	if !sc.All {
		ts, extra = Offered(ts, extra, sc)
	}
	if len(extra) > 0 {
		ts = append(slices.Clip(ts), extra...)
	}
	return ts
}

func (r *Registry) builtin(p *kairos.Policy) []kairos.Tool {
	if p == nil {
		return r.tools
	}
	return keep(r.tools, p)
}

// keep returns the tools of ts that p lets exist (ts itself when all do).
func keep(ts []kairos.Tool, p *kairos.Policy) []kairos.Tool {
	if p == nil {
		return ts
	}
	out := make([]kairos.Tool, 0, len(ts))
	for _, t := range ts {
		if !Absent(p, t.Spec().Name) {
			out = append(out, t)
		}
	}
	if len(out) == len(ts) {
		return ts
	}
	return out
}

// Absent reports whether the tool called name does not exist under p
// (AbsentWhy says why).
func Absent(p *kairos.Policy, name string) bool { return AbsentWhy(p, name) != "" }

// AbsentWhy names the policy key that removes the tool called name, ""
// when it exists: listed in agent.disabled_tools; `schedule` with
// schedules.enabled false; `code` with features.cli_exec false; `skill`
// and every `skill__*` (the approved skills) with features.self_update
// false; `research` with research.enabled false.
func AbsentWhy(p *kairos.Policy, name string) string {
	switch {
	case slices.Contains(p.Agent.DisabledTools, name):
		return "agent.disabled_tools lists it"
	case name == "schedule" && !p.Schedules.Enabled:
		return "schedules.enabled: false"
	case name == "code" && !p.Features.CLIExec:
		return "features.cli_exec: false"
	case kairos.IsSkillTool(name) && !p.Features.SelfUpdate:
		return "features.self_update: false"
	case name == "research" && !p.Research.Enabled:
		return "research.enabled: false"
	}
	return ""
}

// Builtin returns every built-in tool, those p removes included (the
// console lists them as disabled).
func (r *Registry) Builtin() []kairos.Tool { return slices.Clip(r.tools) }

// Access says whether the actions of a tool read, write or both (by
// kairos.WriteActions), and which of them p makes wait for a human's
// yes. A tool's actions are the built-in ones named after it
// ("memory.store" for memory), or the one action of an MCP tool or a
// skill.
func Access(p *kairos.Policy, actions []string) (access string, asks []string) {
	reads, writes := 0, 0
	for _, a := range actions {
		if slices.Contains(kairos.WriteActions, a) {
			writes++
		} else {
			reads++
		}
		if p != nil && slices.Contains(p.Approvals.Required, a) {
			asks = append(asks, a)
		}
	}
	switch {
	case writes > 0 && reads > 0:
		return "read and write", asks
	case writes > 0:
		return "write", asks
	}
	return "read", asks
}

// ActionsOf lists the built-in actions of a tool: those named after it
// (memory → memory.store, memory.recall, …), or the one it is named.
func ActionsOf(tool string) []string {
	var out []string
	for _, a := range kairos.Actions {
		if a == tool || strings.HasPrefix(a, tool+".") {
			out = append(out, a)
		}
	}
	return out
}
