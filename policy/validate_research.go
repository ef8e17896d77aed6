package policy

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// Bounds of the research section.
const (
	MaxResearchRounds    = 50
	MaxResearchToolCalls = 500
	MinResearchTokens    = 200
	MaxResearchTokens    = 2_000_000
	MaxResearchWallTime  = time.Hour
	MaxResearchFileBytes = 64 << 20
)

func validateResearch(c *checker, r *kairos.ResearchPolicy) {
	seen := map[string]bool{}
	for i, t := range r.Tiers {
		path := fmt.Sprintf("research.tiers[%d]", i)
		c.enum(path, t, kairos.ResearchTiers)
		if seen[t] {
			c.add(path, "%q is listed twice", t)
		}
		seen[t] = true
	}
	if u := r.Offline.KiwixURL; u != "" {
		pu, err := url.Parse(u)
		switch {
		case err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "":
			c.add("research.offline.kiwix_url", "%q is not an http:// or https:// URL", u)
		case pu.User != nil:
			c.add("research.offline.kiwix_url", "put no credentials in the URL")
		}
	}
	if strings.ContainsRune(r.Offline.Dir, 0) {
		c.add("research.offline.dir", "a folder name cannot hold a NUL byte")
	}
	if n := r.Offline.MaxFileBytes; n < 1024 || n > MaxResearchFileBytes {
		c.add("research.offline.max_file_bytes", "must be between 1024 and %d, got %d", MaxResearchFileBytes, n)
	}
	if n := r.Web.MaxPageBytes; n < 1024 || n > MaxResearchFileBytes {
		c.add("research.web.max_page_bytes", "must be between 1024 and %d, got %d", MaxResearchFileBytes, n)
	}
	c.hosts("research.web.allow_list", r.Web.AllowList)
	if strings.TrimSpace(r.Model) != r.Model {
		c.add("research.model", "%q: a model name has no surrounding spaces", r.Model)
	}
	c.dur("research.stale_after", r.StaleAfter, true)
	c.dur("research.resume", r.Resume, true)
	for _, d := range []struct {
		name string
		b    kairos.ResearchBudget
	}{{kairos.DepthQuick, r.Budgets.Quick}, {kairos.DepthNormal, r.Budgets.Normal}, {kairos.DepthDeep, r.Budgets.Deep}} {
		validateResearchBudget(c, "research.budgets."+d.name, d.b)
	}
}

func validateResearchBudget(c *checker, path string, b kairos.ResearchBudget) {
	for _, n := range []struct {
		key       string
		v, lo, hi int
	}{
		{"rounds", b.Rounds, 1, MaxResearchRounds},
		{"tool_calls", b.ToolCalls, 1, MaxResearchToolCalls},
		{"tokens.planner", b.Tokens.Planner, MinResearchTokens, MaxResearchTokens},
		{"tokens.researcher", b.Tokens.Researcher, MinResearchTokens, MaxResearchTokens},
		{"tokens.verifier", b.Tokens.Verifier, MinResearchTokens, MaxResearchTokens},
		{"tokens.model", b.Tokens.Model, MinResearchTokens, MaxResearchTokens},
	} {
		if n.v < n.lo || n.v > n.hi {
			c.add(path+"."+n.key, "must be between %d and %d, got %d", n.lo, n.hi, n.v)
		}
	}
	c.dur(path+".wall_time", b.WallTime, true)
	if b.WallTime.Approx() > MaxResearchWallTime {
		c.add(path+".wall_time", "must be at most %s", "PT1H")
	}
}
