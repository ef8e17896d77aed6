package policy

import (
	"fmt"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Summary is a short plain-text description of a policy for the
// operators' /policy command. It names no secrets (the policy holds none)
// and lists user ids only as counts.
func Summary(p *kairos.Policy) string {
	if p == nil {
		return "no policy"
	}
	d := p.Budgets.Defaults
	a := p.Agent
	model := a.Model
	if model == "" {
		model = "from KAIROS_MODEL"
	}
	lines := []string{
		clockSummary(&p.Clock),
		accessSummary(&p.Access),
		featuresSummary(&p.Features),
		networkSummary(p),
		fmt.Sprintf("Cell budget: %s, %d tool calls, %d network calls, %d MB memory, risk %s (+%d per-verb, %d per-tier overrides)",
			msText(d.TimeBudgetMS), d.MaxToolCalls, d.MaxNetworkCalls, d.MemoryLimitMB, d.RiskTier,
			len(p.Budgets.PerVerb), len(p.Budgets.PerRiskTier)),
		"Spending caps: " + spendSummary(&p.Budgets.Spend),
		fmt.Sprintf("Agent: model %s, %d steps and %d tool calls per turn, mode timeout %s", model, a.MaxSteps, a.MaxToolCalls, a.ModeTimeout),
		sessionsSummary(&p.Sessions),
		fmt.Sprintf("Approvals needed for: %s (expire after %s)", list(p.Approvals.Required), p.Approvals.Timeout),
		fmt.Sprintf("Approved once only (no standing grant): %s", list(p.Approvals.NeverGrant)),
	}
	if mcp := mcpSummary(p.MCP); mcp != "" {
		lines = append(lines, mcp)
	}
	lines = append(lines, researchSummary(&p.Research))
	return strings.Join(lines, "\n")
}

// researchSummary is Summary's research line: the tiers and what the
// offline and web tiers may read (no paths or hosts: counts and set/unset).
func researchSummary(r *kairos.ResearchPolicy) string {
	if !r.Enabled {
		return "Research: off"
	}
	set := func(v string) string {
		if v == "" {
			return "none"
		}
		return "set"
	}
	return fmt.Sprintf("Research: tiers %s; offline folder %s, kiwix-serve %s; web %d allowed domains",
		strings.Join(r.Tiers, ", "), set(r.Offline.Dir), set(r.Offline.KiwixURL), len(r.Web.AllowList))
}

// clockSummary is Summary's clock line: mode, check-in rules, latest actions.
func clockSummary(c *kairos.ClockPolicy) string {
	if !c.Enabled {
		return "Clock: disabled"
	}
	checkins := "off"
	if c.Checkins.Enabled {
		ids := make([]string, len(c.Checkins.Rules))
		for i, r := range c.Checkins.Rules {
			ids[i] = r.ID
		}
		checkins = fmt.Sprintf("%d rules", len(ids))
		if len(ids) > 0 {
			checkins += " (" + strings.Join(ids, ", ") + ")"
		}
	}
	return fmt.Sprintf("Clock: %s mode, check-ins %s, latest actions %s", c.Mode, checkins, onOff(c.Store.LatestActions.Enabled))
}

// accessSummary is Summary's access line: who may talk, and groups.
func accessSummary(ap *kairos.AccessPolicy) string {
	group := "only when mentioned or replied to"
	if ap.GroupReplies == "all" {
		group = "to every message"
	}
	return fmt.Sprintf("Access: %d operators, %d allowed users, pairing %s; groups: answers %s",
		len(ap.Operators), len(ap.AllowedUsers), onOff(ap.Pairing), group)
}

// featuresSummary is Summary's features line: which flags are on and off.
func featuresSummary(f *kairos.Features) string {
	var on, off []string
	for _, x := range []struct {
		name string
		v    bool
	}{{"network", f.Network}, {"cli_exec", f.CLIExec}, {"ui_automation", f.UIAutomation},
		{"credentials_access", f.CredentialsAccess}, {"self_update", f.SelfUpdate}, {"peer_sync", f.PeerSync}} {
		if x.v {
			on = append(on, x.name)
		} else {
			off = append(off, x.name)
		}
	}
	return fmt.Sprintf("Features on: %s; off: %s", list(on), list(off))
}

// networkSummary is Summary's network line: what code cells may reach.
func networkSummary(p *kairos.Policy) string {
	if !p.Features.Network {
		return "Network: off for code cells"
	}
	allow := "nothing (allow-list empty)"
	if len(p.Network.AllowList) > 0 {
		allow = strings.Join(p.Network.AllowList, ", ")
	}
	return fmt.Sprintf("Network: %s to %s; blocked: %s", list(p.Network.Methods), allow, list(p.Network.BlockedCategories))
}

// sessionsSummary is Summary's sessions line: division, retention, backup.
func sessionsSummary(s *kairos.SessionsPolicy) string {
	divide := s.AutoDivide
	if s.AutoDivide != "none" {
		divide += " at " + s.AutoDivideTime
	}
	backup := "no scheduled backup"
	if s.BackupSchedule != "" {
		backup = "backup " + s.BackupSchedule
	}
	return fmt.Sprintf("Sessions: new session %s; code executions kept %s; %s", divide, s.CodeExecutionsRetention, backup)
}

// StatusLine describes a ReloadStatus in one line for /policy.
func StatusLine(st ReloadStatus) string {
	at := "never"
	if !st.At.IsZero() {
		at = st.At.UTC().Format("2006-01-02 15:04:05Z")
	}
	switch {
	case !st.OK:
		return fmt.Sprintf("Last reload %s FAILED (the last good policy stays in force):\n%s", at, st.Err)
	case st.Defaults:
		return fmt.Sprintf("No policy file: built-in defaults in force (checked %s)", at)
	default:
		return fmt.Sprintf("Last reload %s: OK", at)
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func msText(ms int) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}
