package kairos

import "time"

// CellFor is the budget of a cell with the given verb, as the policy
// writes it: budgets.defaults, then budgets.per_verb[verb], then
// budgets.per_risk_tier[tier] where tier is the risk tier the first two
// layers set; each layer overrides the non-zero fields of the former. A
// time budget left at 0 is DefaultBudget's.
func (bp *BudgetsPolicy) CellFor(verb string) CellBudget {
	cb := bp.Defaults.Overlay(bp.PerVerb[verb])
	if tier, ok := bp.PerRiskTier[cb.RiskTier]; ok && cb.RiskTier != "" {
		cb = cb.Overlay(tier)
	}
	if cb.TimeBudgetMS <= 0 {
		cb.TimeBudgetMS = int(DefaultBudget().TimeBudget / time.Millisecond)
	}
	return cb
}

// Overlay returns a with the non-zero fields of b.
func (a CellBudget) Overlay(b CellBudget) CellBudget {
	if b.TimeBudgetMS != 0 {
		a.TimeBudgetMS = b.TimeBudgetMS
	}
	if b.MaxToolCalls != 0 {
		a.MaxToolCalls = b.MaxToolCalls
	}
	if b.MaxBytesRead != 0 {
		a.MaxBytesRead = b.MaxBytesRead
	}
	if b.MaxBytesWritten != 0 {
		a.MaxBytesWritten = b.MaxBytesWritten
	}
	if b.MaxNetworkCalls != 0 {
		a.MaxNetworkCalls = b.MaxNetworkCalls
	}
	if b.MemoryLimitMB != 0 {
		a.MemoryLimitMB = b.MemoryLimitMB
	}
	if b.MaxOutputBytes != 0 {
		a.MaxOutputBytes = b.MaxOutputBytes
	}
	if b.RiskTier != "" {
		a.RiskTier = b.RiskTier
	}
	return a
}
