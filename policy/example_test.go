package policy_test

import (
	"fmt"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

func ExampleParse() {
	_, err := policy.Parse("policy.yaml", []byte("access:\n  pairing: true\nclokc:\n  mode: light\n"))
	fmt.Println(err)
	p, _ := policy.Parse("policy.yaml", []byte("clock:\n  mode: off\n"))
	fmt.Println(p.Clock.Mode, p.Clock.Checkins.Rules[0].ID)
	// Output:
	// policy.yaml:3:1: unknown key "clokc", did you mean "clock"?
	// off project_gap_1d
}

func ExampleSummary() {
	p := kairos.DefaultPolicy()
	p.Access.Operators = []int64{42}
	fmt.Println(policy.Summary(p))
	fmt.Println(policy.StatusLine(policy.ReloadStatus{OK: true, Defaults: true}))
	// Output:
	// Clock: light mode, check-ins 3 rules (project_gap_1d, action_gap_2h, long_gap_30d), latest actions on
	// Access: 1 operators, 0 allowed users, pairing on; groups: answers only when mentioned or replied to
	// Features on: cli_exec, self_update; off: network, ui_automation, credentials_access, peer_sync
	// Network: off for code cells
	// Cell budget: 30s, 64 tool calls, 16 network calls, 64 MB memory, risk low (+0 per-verb, 0 per-tier overrides)
	// Spending caps: none
	// Agent: model from KAIROS_MODEL, 8 steps and 16 tool calls per turn, mode timeout PT30M
	// Sessions: new session daily at 00:00; code executions kept P30D; no scheduled backup
	// Approvals needed for: memory.forget, code.network_write, code.secrets, mcp.write (expire after PT10M)
	// Approved once only (no standing grant): skill.create, skill.update, skill.rollback, network.unlisted_host
	// Research: tiers memory, offline, web, model, book; offline folder none, kiwix-serve none; web 0 allowed domains
	// No policy file: built-in defaults in force (checked never)
}
