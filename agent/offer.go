package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

// The offer: the registry (tools.Registry.ToolsFor) decides which of the
// user's tools a step is offered, by relevance to the message; the rest
// stay callable, the system prompt names them, and more_tools offers them
// from the next step on (issue 36: a plain message sends what it needs).

const moreToolsName = "more_tools"

var moreToolsSpec = kairos.ToolSpec{Name: moreToolsName,
	Description: "Offers more of your tools from your next step on: those in `names`, or the best matches of `query`.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}},"query":{"type":"string"}}}`)}

// moreTool stands for more_tools in the offer; runTools answers its calls
// (it runs nothing: it changes what the next step offers).
type moreTool struct{}

func (moreTool) Spec() kairos.ToolSpec { return moreToolsSpec }
func (moreTool) Action(context.Context, *kairos.ToolInvocation) (kairos.ToolAction, error) {
	return kairos.ToolAction{}, kairos.Errorf(kairos.EINTERNAL, "more_tools is answered by the agent")
}
func (moreTool) Call(context.Context, *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	return nil, kairos.Errorf(kairos.EINTERNAL, "more_tools is answered by the agent")
}

// blurbs name what a built-in tool that is not offered yet is for, in
// the prompt's list of more tools.
var blurbs = map[string]string{"code": "JavaScript cells", "schedule": "reminders, timed tasks",
	"skill": "your own tools", "research": "cited answers"}

// maxNamedMore bounds the skills and MCP tools the prompt names.
const maxNamedMore = 8

// wanted lists the tools this turn asked for: those it called (offered
// or not), and those more_tools offered.
func (t *turn) wanted() []string {
	var out []string
	from := 0
	for i, m := range t.msgs {
		if m.Role == kairos.RoleUser {
			from = i
		}
	}
	if len(cellFiles(t.in)) > 0 {
		out = append(out, "code") // a cell reads the turn's files
	}
	for _, m := range t.msgs[from:] {
		for _, c := range m.ToolCalls {
			out = append(out, c.Name)
		}
		if m.Role == kairos.RoleTool && m.Name == moreToolsName {
			var r struct{ Offered []string }
			if json.Unmarshal([]byte(m.Content), &r) == nil {
				out = append(out, r.Offered...)
			}
		}
	}
	return out
}

// modeOffers keeps the tools the turn's mode offers.
func (a *Agent) modeOffers(t *turn, ts []kairos.Tool) []kairos.Tool {
	if a.cfg.Modes == nil || t.tm == nil {
		return ts
	}
	// The mode decides which tools are offered; a call that needs a
	// higher mode is still found (and gated) by runTools.
	allowed := allowedActions(Mode(t.tm.Mode))
	out := make([]kairos.Tool, 0, len(ts))
	for _, tl := range ts {
		if toolOffered(Mode(t.tm.Mode), allowed, tl) {
			out = append(out, tl)
		}
	}
	return out
}

// notOffered lists the tools the turn's mode would offer that this step
// does not.
func (a *Agent) notOffered(t *turn, offered []kairos.Tool) []kairos.Tool {
	var rest []kairos.Tool
	for _, tl := range a.modeOffers(t, a.tools(t, true, nil)) {
		if findTool(offered, tl.Spec().Name) == nil {
			rest = append(rest, tl)
		}
	}
	return rest
}

// moreGuide names the tools not offered yet, for the system prompt: the
// built-in ones with what they are for, skills and MCP tools by name
// when they are few, else counted.
func moreGuide(rest []kairos.Tool) string {
	if len(rest) == 0 {
		return ""
	}
	var parts, extra []string
	skills := 0
	for _, tl := range rest {
		name := tl.Spec().Name
		switch {
		case blurbs[name] != "":
			parts = append(parts, name+" ("+blurbs[name]+")")
		case strings.Contains(name, "__"):
			extra = append(extra, name)
			if kairos.IsSkillTool(name) {
				skills++
			}
		default:
			parts = append(parts, name)
		}
	}
	switch {
	case len(extra) <= maxNamedMore:
		parts = append(parts, extra...)
	case skills > 0 && skills < len(extra):
		parts = append(parts, strconv.Itoa(skills)+" skills and "+strconv.Itoa(len(extra)-skills)+" MCP tools (a query finds them)")
	case skills > 0:
		parts = append(parts, strconv.Itoa(skills)+" skills (a query finds them)")
	default:
		parts = append(parts, strconv.Itoa(len(extra))+" MCP tools (a query finds them)")
	}
	return "\nMore tools (more_tools offers them): " + strings.Join(parts, ", ") + "."
}

// moreTools answers a more_tools call: the registry picks, among the
// tools not offered yet, the ones named or matching the query.
func (a *Agent) moreTools(t *turn, args string) string {
	var in struct {
		Names []string `json:"names"`
		Query string   `json:"query"`
	}
	if err := json.Unmarshal([]byte(args), &in); err != nil || len(in.Names) == 0 && strings.TrimSpace(in.Query) == "" {
		return errorResult("give names (tool names) or a query (what the tool should do)")
	}
	rest := a.offer(t).rest
	var got []string
	for _, tl := range rest {
		if slices.Contains(in.Names, tl.Spec().Name) {
			got = append(got, tl.Spec().Name)
		}
	}
	if in.Query != "" {
		if s, ok := a.cfg.Tools.(kairos.ScopedToolRegistry); ok {
			for _, tl := range s.ToolsFor(t.pol, kairos.ToolScope{UserKey: t.in.UserKey(), Query: in.Query, Turn: t.in.Turn}) {
				if name := tl.Spec().Name; findTool(rest, name) != nil && !slices.Contains(got, name) {
					got = append(got, name)
				}
			}
		}
	}
	res := map[string]any{"offered": got}
	if len(got) == 0 {
		var names []string
		for _, tl := range rest {
			names = append(names, tl.Spec().Name)
		}
		res = map[string]any{"offered": []string{}, "error": "no such tool; not offered yet: " + strings.Join(names, ", ")}
	}
	b, _ := json.Marshal(res)
	return string(b)
}
