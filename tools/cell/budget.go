package cell

import (
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// BudgetFor returns the budget of a cell with the given verb under p
// (kairos.BudgetsPolicy.CellFor: defaults, then per verb, then per risk
// tier). A nil p means kairos.DefaultPolicy().
func BudgetFor(p *kairos.Policy, verb string) kairos.Budget {
	if p == nil {
		p = kairos.DefaultPolicy()
	}
	cb := p.Budgets.CellFor(verb)
	return kairos.Budget{
		TimeBudget:      time.Duration(cb.TimeBudgetMS) * time.Millisecond,
		MaxToolCalls:    cb.MaxToolCalls,
		MaxBytesRead:    cb.MaxBytesRead,
		MaxBytesWritten: cb.MaxBytesWritten,
		MaxNetworkCalls: cb.MaxNetworkCalls,
		MemoryLimit:     int64(cb.MemoryLimitMB) << 20,
		MaxOutputBytes:  cb.MaxOutputBytes,
		RiskTier:        cb.RiskTier,
	}
}

// GrantFor returns the network grant p allows: nothing when
// features.network is off; otherwise network.allow_list, network.methods
// (upper-cased, GET when empty) and network.blocked_categories together
// with kairos.BuiltinBlockedCategories. A nil p means the default policy.
func GrantFor(p *kairos.Policy) kairos.NetworkGrant {
	if p == nil {
		p = kairos.DefaultPolicy()
	}
	if !p.Features.Network {
		return kairos.NetworkGrant{}
	}
	g := kairos.NetworkGrant{
		Enabled:    true,
		AllowHosts: slices.Clone(p.Network.AllowList),
	}
	for _, m := range p.Network.Methods {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m != "" && !slices.Contains(g.Methods, m) {
			g.Methods = append(g.Methods, m)
		}
	}
	if len(g.Methods) == 0 {
		g.Methods = []string{"GET"}
	}
	for _, c := range append(slices.Clone(kairos.BuiltinBlockedCategories), p.Network.BlockedCategories...) {
		if c != "" && !slices.Contains(g.BlockedCategories, c) {
			g.BlockedCategories = append(g.BlockedCategories, c)
		}
	}
	return g
}

// WritesAllowed reports whether g lets a cell send anything but GET/HEAD.
func WritesAllowed(g kairos.NetworkGrant) bool {
	if !g.Enabled {
		return false
	}
	for _, m := range g.Methods {
		if !slices.Contains(ReadMethods, m) {
			return true
		}
	}
	return false
}

// ReadOnly returns g limited to GET and HEAD.
func ReadOnly(g kairos.NetworkGrant) kairos.NetworkGrant {
	var ms []string
	for _, m := range g.Methods {
		if slices.Contains(ReadMethods, m) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 && g.Enabled {
		ms = []string{"GET"}
	}
	g.Methods = ms
	return g
}
