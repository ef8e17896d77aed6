package policy_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kairos-agent/kairos"
)

// researchWidenings: the research section's ways to read, send or spend
// more (the rest of it is tuning).
func researchWidenings() []widening {
	set := func(key string, f func(r *rand.Rand, old, proposed *kairos.ResearchPolicy)) widening {
		return widening{key, func(r *rand.Rand, old, proposed *kairos.Policy) string {
			f(r, &old.Research, &proposed.Research)
			return key
		}}
	}
	ws := []widening{
		set("research.enabled", func(_ *rand.Rand, o, n *kairos.ResearchPolicy) { o.Enabled, n.Enabled = false, true }),
		set("research.tiers", func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
			t := kairos.ResearchTiers[r.IntN(len(kairos.ResearchTiers))]
			o.Tiers = slices.DeleteFunc(slices.Clone(o.Tiers), func(x string) bool { return x == t })
			n.Tiers = append(slices.Clone(o.Tiers), t)
		}),
		set("research.offline.dir", func(r *rand.Rand, o, n *kairos.ResearchPolicy) { n.Offline.Dir = fmt.Sprintf("/etc/%d", r.IntN(9)) }),
		set("research.offline.kiwix_url", func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
			n.Offline.KiwixURL = fmt.Sprintf("http://10.0.0.%d:8090", r.IntN(200))
		}),
		set("research.offline.max_file_bytes", func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
			n.Offline.MaxFileBytes = o.Offline.MaxFileBytes + 1 + int64(r.IntN(1000))
		}),
		set("research.web.max_page_bytes", func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
			n.Web.MaxPageBytes = o.Web.MaxPageBytes + 1 + int64(r.IntN(1000))
		}),
		set("research.model", func(r *rand.Rand, o, n *kairos.ResearchPolicy) { n.Model = fmt.Sprintf("elsewhere-%d", r.IntN(9)) }),
		set("research.web.allow_list", func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
			n.Web.AllowList = append(slices.Clone(o.Web.AllowList), []string{"attacker.test", "*.test", "intranet.local"}[r.IntN(3)])
		}),
	}
	for _, d := range []string{kairos.DepthQuick, kairos.DepthNormal, kairos.DepthDeep} {
		budget := func(p *kairos.ResearchPolicy) *kairos.ResearchBudget {
			return map[string]*kairos.ResearchBudget{kairos.DepthQuick: &p.Budgets.Quick, kairos.DepthNormal: &p.Budgets.Normal, kairos.DepthDeep: &p.Budgets.Deep}[d]
		}
		for _, f := range []struct {
			key string
			get func(b *kairos.ResearchBudget) *int
		}{{"rounds", func(b *kairos.ResearchBudget) *int { return &b.Rounds }}, {"tool_calls", func(b *kairos.ResearchBudget) *int { return &b.ToolCalls }},
			{"tokens.planner", func(b *kairos.ResearchBudget) *int { return &b.Tokens.Planner }},
			{"tokens.researcher", func(b *kairos.ResearchBudget) *int { return &b.Tokens.Researcher }},
			{"tokens.verifier", func(b *kairos.ResearchBudget) *int { return &b.Tokens.Verifier }},
			{"tokens.model", func(b *kairos.ResearchBudget) *int { return &b.Tokens.Model }}} {
			ws = append(ws, set("research.budgets."+d+"."+f.key, func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
				*f.get(budget(n)) = *f.get(budget(o)) + 1 + r.IntN(100)
			}))
		}
		ws = append(ws, set("research.budgets."+d+".wall_time", func(r *rand.Rand, o, n *kairos.ResearchPolicy) {
			budget(n).WallTime = kairos.Duration{Seconds: budget(o).WallTime.Approx().Seconds() + float64(1+r.IntN(60))}
		}))
	}
	return ws
}
