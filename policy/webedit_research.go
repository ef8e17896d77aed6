package policy

import (
	"fmt"

	"github.com/kairos-agent/kairos"
)

// researchWidening: research turned on or given a tier; a folder or a
// kiwix-serve named or changed (they read the host and its network); a
// domain the web tier may read that no entry in force covers; the
// external model changed (the quotes go to it); a document or page size,
// or any depth's budget, raised. research.stale_after and research.resume
// are tuning.
func researchWidening(old, proposed *kairos.Policy) string {
	o, n := &old.Research, &proposed.Research
	switch {
	case !o.Enabled && n.Enabled:
		return "research.enabled"
	case !subset(n.Tiers, o.Tiers):
		return "research.tiers"
	case n.Offline.Dir != o.Offline.Dir && n.Offline.Dir != "":
		return "research.offline.dir"
	case n.Offline.KiwixURL != o.Offline.KiwixURL && n.Offline.KiwixURL != "":
		return "research.offline.kiwix_url"
	case n.Offline.MaxFileBytes > o.Offline.MaxFileBytes:
		return "research.offline.max_file_bytes"
	case n.Web.MaxPageBytes > o.Web.MaxPageBytes:
		return "research.web.max_page_bytes"
	case n.Model != o.Model && n.Model != "":
		return "research.model"
	}
	for _, h := range n.Web.AllowList {
		if !hostCovered(h, o.Web.AllowList) {
			return "research.web.allow_list"
		}
	}
	for _, d := range []string{kairos.DepthQuick, kairos.DepthNormal, kairos.DepthDeep} {
		if key := researchBudgetRaising(o.Budgets.Budget(d), n.Budgets.Budget(d)); key != "" {
			return fmt.Sprintf("research.budgets.%s.%s", d, key)
		}
	}
	return ""
}

// researchBudgetRaising names the first limit of a research budget that
// n raises over o.
func researchBudgetRaising(o, n kairos.ResearchBudget) string {
	for _, f := range []struct {
		key  string
		o, n int
	}{{"rounds", o.Rounds, n.Rounds}, {"tool_calls", o.ToolCalls, n.ToolCalls},
		{"tokens.planner", o.Tokens.Planner, n.Tokens.Planner}, {"tokens.researcher", o.Tokens.Researcher, n.Tokens.Researcher},
		{"tokens.verifier", o.Tokens.Verifier, n.Tokens.Verifier}, {"tokens.model", o.Tokens.Model, n.Tokens.Model}} {
		if f.n > f.o {
			return f.key
		}
	}
	if n.WallTime.Approx() > o.WallTime.Approx() {
		return "wall_time"
	}
	return ""
}
