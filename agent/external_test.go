package agent

import (
	"context"
	"testing"

	"github.com/kairos-agent/kairos"
)

type extTool struct{ name, action string }

func (e extTool) Spec() kairos.ToolSpec { return kairos.ToolSpec{Name: e.name} }
func (e extTool) Server() string        { return "notes" }
func (e extTool) OfferedAction() string { return e.action }
func (e extTool) Action(context.Context, *kairos.ToolInvocation) (kairos.ToolAction, error) {
	return kairos.ToolAction{Name: e.action, Impactful: e.action == kairos.ActionMCPWrite}, nil
}
func (e extTool) Call(context.Context, *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	return nil, nil
}

// TestExternalToolsOffered: an MCP tool is offered by the action it
// declares, not by its name; a write tool is offered in DISCUSS and
// DIAGNOSE (the gate moves DISCUSS to DIAGNOSE on the call; approvals
// apply), like the memory tool whose forget lives in the edit envelope.
func TestExternalToolsOffered(t *testing.T) {
	read := extTool{"notes__search", kairos.ActionMCPRead}
	write := extTool{"notes__add", kairos.ActionMCPWrite}
	odd := extTool{"notes__x", "code.network_write"}
	for _, tc := range []struct {
		mode                  Mode
		read, write, netWrite bool
	}{
		{ModeDiscuss, true, true, false},
		{ModeDiagnose, true, true, false},
		{ModeExecute, true, true, true},
	} {
		allowed := allowedActions(tc.mode)
		if got := toolOffered(tc.mode, allowed, read); got != tc.read {
			t.Errorf("%s: read tool offered = %v", tc.mode, got)
		}
		if got := toolOffered(tc.mode, allowed, write); got != tc.write {
			t.Errorf("%s: write tool offered = %v", tc.mode, got)
		}
		if got := toolOffered(tc.mode, allowed, odd); got != tc.netWrite {
			t.Errorf("%s: tool declaring code.network_write offered = %v", tc.mode, got)
		}
	}
	if toolOffered(ModeDiscuss, allowedActions(ModeDiscuss), extTool{"notes__search", "search"}) != true {
		t.Error("an external tool declaring search is not offered in DISCUSS")
	}
}
