package policy_test

import (
	"slices"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/policy"
)

// TestKnownActionsMatchAgent ties the actions approvals.required may name
// to the actions the agent's envelopes grant: a name the agent uses but
// the policy refuses could never be made to need approval, and a name the
// policy accepts but no tool uses would silently need none.
func TestKnownActionsMatchAgent(t *testing.T) {
	granted := map[string]bool{}
	for _, m := range []agent.Mode{agent.ModeDiscuss, agent.ModeDiagnose, agent.ModeExecute} {
		for _, env := range agent.EnvelopesForMode(m) {
			for act := range agent.AllowedActions(m, env) {
				granted[act] = true
			}
		}
	}
	for act := range granted {
		if !slices.Contains(policy.KnownActions, act) {
			t.Errorf("agent grants %q but approvals.required would refuse it", act)
		}
	}
	for _, act := range kairos.Actions {
		if !granted[act] {
			t.Errorf("kairos.Actions lists %q but no envelope in any mode grants it", act)
		}
	}
	for _, act := range kairos.DefaultPolicy().Approvals.Required {
		if !slices.Contains(policy.KnownActions, act) {
			t.Errorf("default approvals.required names unknown action %q", act)
		}
	}
}
