package policy

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

// validateSpend checks budgets.spend: caps are ≥ 0 (0 is allowed and
// means "cannot use the model"), shares lie in [0, 1], per_user keys are
// Telegram user ids.
func validateSpend(c *checker, s *kairos.SpendPolicy) {
	spendCaps(c, "budgets.spend", s.SpendCaps)
	for _, id := range sortedKeys(s.PerUser) {
		path := "budgets.spend.per_user." + id
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
			c.addKey(path, "%q is not a Telegram user id (a positive number)", id)
		}
		spendCaps(c, path, s.PerUser[id])
	}
	spendTokens(c, "budgets.spend.bot_monthly_tokens", s.BotMonthlyTokens)
	spendUSD(c, "budgets.spend.bot_monthly_usd", s.BotMonthlyUSD)
	if b := s.BackgroundShare; b != nil && (math.IsNaN(*b) || *b < 0 || *b > 1) {
		c.add("budgets.spend.background_share", "must be a share from 0 to 1, got %v", *b)
	}
	if n := s.NoticeAt; math.IsNaN(n) || n < 0 || n >= 1 {
		c.add("budgets.spend.notice_at", "must be a share above 0 and below 1 (0 for the default 0.8), got %v", n)
	}
}

func spendCaps(c *checker, path string, caps kairos.SpendCaps) {
	spendTokens(c, path+".daily_tokens", caps.DailyTokens)
	spendTokens(c, path+".monthly_tokens", caps.MonthlyTokens)
	spendUSD(c, path+".daily_usd", caps.DailyUSD)
	spendUSD(c, path+".monthly_usd", caps.MonthlyUSD)
}

func spendTokens(c *checker, path string, v *int64) {
	if v != nil && *v < 0 {
		c.add(path, "a cap is ≥ 0 (0: no model use at all; leave it out for no cap), got %d", *v)
	}
}

func spendUSD(c *checker, path string, v *float64) {
	if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
		c.add(path, "a cap in US dollars is ≥ 0 (0: no model use at all; leave it out for no cap), got %v", *v)
	}
}

// spendSummary is the caps of budgets.spend in one line for /policy.
func spendSummary(s *kairos.SpendPolicy) string {
	var parts []string
	tok := func(name string, v *int64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s %d tokens", name, *v))
		}
	}
	usd := func(name string, v *float64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s $%.2f", name, *v))
		}
	}
	tok("daily", s.DailyTokens)
	tok("monthly", s.MonthlyTokens)
	usd("daily", s.DailyUSD)
	usd("monthly", s.MonthlyUSD)
	tok("bot monthly", s.BotMonthlyTokens)
	usd("bot monthly", s.BotMonthlyUSD)
	if len(parts) == 0 && len(s.PerUser) == 0 {
		return "none"
	}
	out := strings.Join(parts, ", ")
	if out == "" {
		out = "none by default"
	}
	if n := len(s.PerUser); n > 0 {
		out += fmt.Sprintf(" (+%d per-user overrides)", n)
	}
	if b := s.Background(); b < 1 {
		out += fmt.Sprintf("; scheduled tasks %.0f%% of each", b*100)
	}
	return out
}
