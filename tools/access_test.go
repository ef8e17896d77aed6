package tools

import (
	"slices"
	"testing"

	"github.com/kairos-agent/kairos"
)

// Each built-in tool reads, writes or both by its actions, and the
// policy's approvals say which of them ask first; every write action is
// a known action.
func TestAccessOfBuiltinTools(t *testing.T) {
	p := kairos.DefaultPolicy()
	for _, c := range []struct {
		tool, access string
		asks         []string
	}{
		{"search", "read", nil},
		{"memory", "read and write", []string{kairos.ActionMemoryForget}},
		{"code", "read and write", []string{kairos.ActionCodeNetworkWrite, kairos.ActionCodeSecrets}},
		{"schedule", "read and write", nil},
		{"skill", "read and write", nil},
	} {
		access, asks := Access(p, ActionsOf(c.tool))
		if access != c.access || !slices.Equal(asks, c.asks) {
			t.Errorf("%s: %q asks %v, want %q asks %v", c.tool, access, asks, c.access, c.asks)
		}
	}
	if a, _ := Access(p, []string{kairos.ActionMCPWrite}); a != "write" {
		t.Errorf("an MCP write tool: %q", a)
	}
	for _, a := range kairos.WriteActions {
		if !slices.Contains(kairos.Actions, a) {
			t.Errorf("write action %q is not an action", a)
		}
	}
	p.Features.CLIExec, p.Agent.DisabledTools = false, []string{"search"}
	if AbsentWhy(p, "code") != "features.cli_exec: false" || AbsentWhy(p, "search") != "agent.disabled_tools lists it" || AbsentWhy(p, "memory") != "" {
		t.Errorf("absent: code %q, search %q, memory %q", AbsentWhy(p, "code"), AbsentWhy(p, "search"), AbsentWhy(p, "memory"))
	}
}
