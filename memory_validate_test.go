package kairos_test

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestMemoryValidate(t *testing.T) {
	prio := func(n int) *int { return &n }
	ok := func() kairos.Memory {
		return kairos.Memory{UserKey: "telegram:1", Store: kairos.StoreUserMemory, Type: "fact", Content: "likes tea"}
	}
	sum := func(typ, key string) kairos.Memory {
		return kairos.Memory{UserKey: "telegram:1", Store: kairos.StoreSummaries, Type: typ, PeriodKey: key, Content: "we talked"}
	}
	tests := []struct {
		name string
		m    func() kairos.Memory
		want string // "" = valid
	}{
		{"user memory", ok, ""},
		{"priority 100", func() kairos.Memory { m := ok(); m.PursuingPriority = prio(100); return m }, ""},
		{"weekly summary", func() kairos.Memory { return sum(kairos.SummaryWeekly, "2026-W48") }, ""},
		{"no user", func() kairos.Memory { m := ok(); m.UserKey = ""; return m }, "needs its user"},
		{"blank content", func() kairos.Memory { m := ok(); m.Content = " \x00 "; return m }, `"content" is required`},
		{"invalid UTF-8", func() kairos.Memory { m := ok(); m.Content = "a\xffb"; return m }, "not valid UTF-8"},
		{"priority 101", func() kairos.Memory { m := ok(); m.PursuingPriority = prio(101); return m }, "out of range 0..100"},
		{"priority -1", func() kairos.Memory { m := ok(); m.PursuingPriority = prio(-1); return m }, "out of range 0..100"},
		{"unknown category", func() kairos.Memory { m := ok(); m.Type = "gossip"; return m }, `"category": "gossip" is not one of`},
		{"period key on a user memory", func() kairos.Memory { m := ok(); m.PeriodKey = "2026-11"; return m }, `"period_key" is only for store`},
		{"unknown store", func() kairos.Memory { m := ok(); m.Store = "diary"; return m }, `"store": "diary" is not one of`},
		{"unknown summary type", func() kairos.Memory { return sum("hourly-summary", "2026-11-25") }, `"summary_type": "hourly-summary"`},
		{"key of the wrong shape", func() kairos.Memory { return sum(kairos.SummaryMonthly, "2026-W48") }, "not a valid YYYY-MM key"},
		{"week 53 of a 52-week year", func() kairos.Memory { return sum(kairos.SummaryWeekly, "2025-W53") }, "not a valid YYYY-Www key"},
		{"30 February", func() kairos.Memory { return sum(kairos.SummaryDaily, "2026-02-30") }, "not a valid YYYY-MM-DD key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m()
			err := m.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate = %v, want nil", err)
			case tc.want != "" && (kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want EINVALID containing %q", err, tc.want)
			}
		})
	}
}
