package kairos

import (
	"strconv"
	"time"
)

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

// SpendCaps are one user's caps on model use. A nil cap is no cap; a cap
// of 0 means the user cannot use the model at all. Days and months are
// the user's own (their Session TZ).
type SpendCaps struct {
	DailyTokens   *int64   `yaml:"daily_tokens" json:"daily_tokens,omitempty"`
	MonthlyTokens *int64   `yaml:"monthly_tokens" json:"monthly_tokens,omitempty"`
	DailyUSD      *float64 `yaml:"daily_usd" json:"daily_usd,omitempty"`
	MonthlyUSD    *float64 `yaml:"monthly_usd" json:"monthly_usd,omitempty"`
}

// SpendPolicy is budgets.spend: the default caps of every user, per-user
// overrides, a monthly cap for the whole bot, and the share of each cap
// that background work (scheduled tasks) may use.
type SpendPolicy struct {
	// SpendCaps are the default caps of every user (the same keys at the
	// top of budgets.spend).
	SpendCaps `yaml:",inline"`
	// PerUser overrides the defaults by Telegram user id: a cap given
	// there replaces the default one; the others stay.
	PerUser map[string]SpendCaps `yaml:"per_user" json:"per_user,omitempty"`
	// BotMonthlyUSD and BotMonthlyTokens cap everyone together per
	// calendar month (UTC).
	BotMonthlyUSD    *float64 `yaml:"bot_monthly_usd" json:"bot_monthly_usd,omitempty"`
	BotMonthlyTokens *int64   `yaml:"bot_monthly_tokens" json:"bot_monthly_tokens,omitempty"`
	// BackgroundShare is the share (0 to 1) of each of a user's caps that
	// their scheduled tasks may use; nil is 1 (all of it).
	BackgroundShare *float64 `yaml:"background_share" json:"background_share,omitempty"`
	// NoticeAt is the share (0 to 1, exclusive) of a cap at which the user
	// is told, once; 0 is the default 0.8.
	NoticeAt float64 `yaml:"notice_at" json:"notice_at,omitempty"`
}

// CapsFor returns the caps of a user: the defaults with the user's
// overrides over them.
func (s *SpendPolicy) CapsFor(userID int64) SpendCaps {
	c := s.SpendCaps
	if len(s.PerUser) == 0 {
		return c
	}
	o, ok := s.PerUser[strconv.FormatInt(userID, 10)]
	if !ok {
		return c
	}
	if o.DailyTokens != nil {
		c.DailyTokens = o.DailyTokens
	}
	if o.MonthlyTokens != nil {
		c.MonthlyTokens = o.MonthlyTokens
	}
	if o.DailyUSD != nil {
		c.DailyUSD = o.DailyUSD
	}
	if o.MonthlyUSD != nil {
		c.MonthlyUSD = o.MonthlyUSD
	}
	return c
}

// Any reports whether any cap is set.
func (c SpendCaps) Any() bool {
	return c.DailyTokens != nil || c.MonthlyTokens != nil || c.DailyUSD != nil || c.MonthlyUSD != nil
}

// Notice returns the notice share in force (0.8 by default).
func (s *SpendPolicy) Notice() float64 {
	if s.NoticeAt <= 0 || s.NoticeAt >= 1 {
		return 0.8
	}
	return s.NoticeAt
}

// Background returns the background share in force (1 by default).
func (s *SpendPolicy) Background() float64 {
	if s.BackgroundShare == nil {
		return 1
	}
	return min(max(*s.BackgroundShare, 0), 1)
}
