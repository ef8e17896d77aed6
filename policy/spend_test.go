package policy_test

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/policy"
)

// budgets.spend: caps ≥ 0 (0 allowed), shares in range, per_user keys are
// user ids, each refusal placed at its line.
func TestSpendValidation(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"negative tokens", "budgets:\n  spend:\n    daily_tokens: -1\n", "policy.yaml:3:19: budgets.spend.daily_tokens: a cap is ≥ 0"},
		{"negative dollars", "budgets:\n  spend:\n    per_user:\n      \"42\": {monthly_usd: -2}\n", "budgets.spend.per_user.42.monthly_usd: a cap in US dollars is ≥ 0"},
		{"bad user id", "budgets:\n  spend:\n    per_user:\n      alice: {daily_usd: 1}\n", "policy.yaml:4:7: budgets.spend.per_user.alice: \"alice\" is not a Telegram user id"},
		{"share over 1", "budgets:\n  spend:\n    background_share: 1.5\n", "budgets.spend.background_share: must be a share from 0 to 1"},
		{"notice at 1", "budgets:\n  spend:\n    notice_at: 1\n", "budgets.spend.notice_at: must be a share above 0 and below 1"},
		{"unknown key", "budgets:\n  spend:\n    daily_dollars: 1\n", "unknown key \"daily_dollars\" in budgets.spend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.Parse("policy.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
	p, err := policy.Parse("policy.yaml", []byte("budgets:\n  spend:\n    daily_tokens: 0\n    monthly_usd: 5\n    per_user:\n      \"42\": {daily_tokens: 1000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	sp := &p.Budgets.Spend
	if c := sp.CapsFor(42); c.DailyTokens == nil || *c.DailyTokens != 1000 || c.MonthlyUSD == nil || *c.MonthlyUSD != 5 {
		t.Fatalf("caps of 42 = %+v", c)
	}
	if c := sp.CapsFor(7); c.DailyTokens == nil || *c.DailyTokens != 0 {
		t.Fatalf("caps of 7 = %+v (a cap of 0 must stay 0, not no cap)", c)
	}
	if got := policy.Summary(p); !strings.Contains(got, "Spending caps: daily 0 tokens, monthly $5.00 (+1 per-user overrides)") {
		t.Fatalf("summary lacks the caps:\n%s", got)
	}
	if sp.Notice() != 0.8 || sp.Background() != 1 {
		t.Fatalf("defaults: notice %v, background %v", sp.Notice(), sp.Background())
	}
}
