package policy

import (
	"slices"
	"strconv"

	"github.com/kairos-agent/kairos"
)

// budgetsRaising: a cell budget, spending cap or price that lets more be
// spent than the policy in force does.
func budgetsRaising(old, proposed *kairos.Policy) string {
	if key := cellBudgetRaising(old, proposed); key != "" {
		return key
	}
	if key := spendRaising(&old.Budgets.Spend, &proposed.Budgets.Spend); key != "" {
		return key
	}
	return priceLowering(old, proposed)
}

// cellFields are the limits of a cell budget, by their policy names.
var cellFields = []struct {
	name string
	get  func(kairos.CellBudget) int64
}{
	{"time_budget_ms", func(b kairos.CellBudget) int64 { return int64(b.TimeBudgetMS) }},
	{"max_tool_calls", func(b kairos.CellBudget) int64 { return int64(b.MaxToolCalls) }},
	{"max_bytes_read", func(b kairos.CellBudget) int64 { return b.MaxBytesRead }},
	{"max_bytes_written", func(b kairos.CellBudget) int64 { return b.MaxBytesWritten }},
	{"max_network_calls", func(b kairos.CellBudget) int64 { return int64(b.MaxNetworkCalls) }},
	{"memory_limit_mb", func(b kairos.CellBudget) int64 { return int64(b.MemoryLimitMB) }},
	{"max_output_bytes", func(b kairos.CellBudget) int64 { return b.MaxOutputBytes }},
}

// cellBudgetRaising compares, for every verb (and none), the budget a
// cell gets (kairos.BudgetsPolicy.CellFor); a limit raised is named at
// the layer that raised it.
func cellBudgetRaising(old, proposed *kairos.Policy) string {
	for _, verb := range append([]string{""}, kairos.Verbs...) {
		o, n := old.Budgets.CellFor(verb), proposed.Budgets.CellFor(verb)
		for _, f := range cellFields {
			if f.get(n) <= f.get(o) {
				continue
			}
			if n.RiskTier != o.RiskTier {
				return riskTierKey(old, proposed, verb)
			}
			key := budgetLayer(proposed, verb, f.name, f.get)
			if key == "budgets.defaults."+f.name { // an override removed
				key = budgetLayer(old, verb, f.name, f.get)
			}
			return key
		}
	}
	return ""
}

// budgetLayer is the key that gives a verb's cells a limit under p.
func budgetLayer(p *kairos.Policy, verb, field string, get func(kairos.CellBudget) int64) string {
	bp := &p.Budgets
	tier := bp.Defaults.Overlay(bp.PerVerb[verb]).RiskTier
	if t, ok := bp.PerRiskTier[tier]; ok && tier != "" && get(t) != 0 {
		return "budgets.per_risk_tier." + tier + "." + field
	}
	if verb != "" && get(bp.PerVerb[verb]) != 0 {
		return "budgets.per_verb." + verb + "." + field
	}
	return "budgets.defaults." + field
}

// riskTierKey names the risk_tier that moved a verb to a richer tier.
func riskTierKey(old, proposed *kairos.Policy, verb string) string {
	if verb != "" && (proposed.Budgets.PerVerb[verb].RiskTier != "" || old.Budgets.PerVerb[verb].RiskTier != "") {
		return "budgets.per_verb." + verb + ".risk_tier"
	}
	return "budgets.defaults.risk_tier"
}

// capField is one cap of kairos.SpendCaps: in tokens or in US dollars.
type capField struct {
	name string
	tok  func(kairos.SpendCaps) *int64
	usd  func(kairos.SpendCaps) *float64
}

// capFields are the caps of kairos.SpendCaps, by their policy names.
var capFields = []capField{
	{name: "daily_tokens", tok: func(c kairos.SpendCaps) *int64 { return c.DailyTokens }},
	{name: "monthly_tokens", tok: func(c kairos.SpendCaps) *int64 { return c.MonthlyTokens }},
	{name: "daily_usd", usd: func(c kairos.SpendCaps) *float64 { return c.DailyUSD }},
	{name: "monthly_usd", usd: func(c kairos.SpendCaps) *float64 { return c.MonthlyUSD }},
}

// capRaised reports whether a cap in force (o) is raised or removed (n);
// no cap in force cannot be raised.
func capRaised[T int64 | float64](o, n *T) bool { return o != nil && (n == nil || *n > *o) }

func (f *capField) raised(o, n kairos.SpendCaps) bool {
	if f.tok != nil {
		return capRaised(f.tok(o), f.tok(n))
	}
	return capRaised(f.usd(o), f.usd(n))
}

// spendRaising compares the caps everyone gets, the caps each user named
// in either policy gets (their override, or everyone's), and the bot's.
func spendRaising(old, proposed *kairos.SpendPolicy) string {
	for i := range capFields {
		if capFields[i].raised(old.SpendCaps, proposed.SpendCaps) {
			return "budgets.spend." + capFields[i].name
		}
	}
	for _, key := range unionKeys(old.PerUser, proposed.PerUser) {
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			continue // refused by validation; CapsFor never reads it
		}
		for i := range capFields {
			f := &capFields[i]
			if !f.raised(old.CapsFor(id), proposed.CapsFor(id)) {
				continue
			}
			if f.set(proposed.PerUser[key]) || f.set(old.PerUser[key]) {
				return "budgets.spend.per_user." + key + "." + f.name
			}
			return "budgets.spend." + f.name
		}
	}
	switch {
	case capRaised(old.BotMonthlyUSD, proposed.BotMonthlyUSD):
		return "budgets.spend.bot_monthly_usd"
	case capRaised(old.BotMonthlyTokens, proposed.BotMonthlyTokens):
		return "budgets.spend.bot_monthly_tokens"
	case proposed.Background() > old.Background():
		return "budgets.spend.background_share"
	}
	return ""
}

func (f *capField) set(c kairos.SpendCaps) bool {
	if f.tok != nil {
		return f.tok(c) != nil
	}
	return f.usd(c) != nil
}

// priceLowering: a model's price (as the policy and the built-in table
// give it) lowered or removed makes its calls count for less against
// the US-dollar caps; a model without a price named while such a cap
// applies would not count at all.
func priceLowering(old, proposed *kairos.Policy) string {
	for _, name := range unionKeys(old.Models, proposed.Models) {
		o, _ := old.Model(name)
		n, _ := proposed.Model(name)
		if o.Price == nil {
			continue
		}
		if n.Price == nil {
			return "models." + name + ".price"
		}
		if key := cheaper(*o.Price, *n.Price); key != "" {
			return "models." + name + ".price." + key
		}
	}
	if !usdCapped(&proposed.Budgets.Spend) {
		return ""
	}
	a, b := &old.Agent, &proposed.Agent
	for _, m := range []struct {
		key      string
		old, new []string
	}{
		{"agent.model", []string{a.Model}, []string{b.Model}},
		{"agent.fallback_models", a.FallbackModels, b.FallbackModels},
		{"agent.embedding_model", []string{a.EmbeddingModel}, []string{b.EmbeddingModel}},
	} {
		for _, name := range m.new {
			if spec, _ := proposed.Model(name); name != "" && !slices.Contains(m.old, name) && spec.Price == nil {
				return m.key
			}
		}
	}
	return ""
}

// cheaper names the first price of n below o's.
func cheaper(o, n kairos.ModelPrice) string {
	for _, f := range []struct {
		name string
		o, n float64
	}{
		{"input", o.Input, n.Input}, {"cached_input", o.CachedInput, n.CachedInput}, {"output", o.Output, n.Output},
		{"audio_per_minute", o.AudioPerMinute, n.AudioPerMinute}, {"per_image", o.PerImage, n.PerImage},
	} {
		if f.n < f.o {
			return f.name
		}
	}
	return ""
}

// usdCapped reports whether any US-dollar cap applies.
func usdCapped(s *kairos.SpendPolicy) bool {
	if s.DailyUSD != nil || s.MonthlyUSD != nil || s.BotMonthlyUSD != nil {
		return true
	}
	for _, c := range s.PerUser {
		if c.DailyUSD != nil || c.MonthlyUSD != nil {
			return true
		}
	}
	return false
}

// unionKeys is the keys of a and b, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := sortedKeys(a)
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
