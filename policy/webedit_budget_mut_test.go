package policy_test

import (
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/kairos-agent/kairos"
)

// cellLimits are the numeric limits of a cell budget, by policy name.
var cellLimits = []string{"time_budget_ms", "max_tool_calls", "max_bytes_read", "max_bytes_written", "max_network_calls", "memory_limit_mb", "max_output_bytes"}

// fieldByYAML is the field of a struct value whose yaml key is name.
func fieldByYAML(v reflect.Value, name string) reflect.Value {
	for i := range v.NumField() {
		if n, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ","); n == name {
			return v.Field(i)
		}
	}
	panic("no field " + name)
}

func cellGet(c kairos.CellBudget, f string) int64 { return fieldByYAML(reflect.ValueOf(c), f).Int() }

func cellSet(c *kairos.CellBudget, f string, v int64) {
	fieldByYAML(reflect.ValueOf(c).Elem(), f).SetInt(v)
}

// clearLayer makes a limit come from elsewhere: it is zeroed (inherited)
// in every entry of a layer of p.
func clearLayer(m map[string]kairos.CellBudget, f string) {
	for k := range m {
		editCell(m, k, func(c *kairos.CellBudget) { cellSet(c, f, 0) })
	}
}

func anyVerb(r *rand.Rand) string { return kairos.Verbs[r.IntN(len(kairos.Verbs))] }

func cellWidenings() []widening {
	var ws []widening
	for _, f := range cellLimits {
		ws = append(ws,
			widening{"budgets.defaults." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string {
				both(old, proposed, func(p *kairos.Policy) { clearLayer(p.Budgets.PerVerb, f); clearLayer(p.Budgets.PerRiskTier, f) })
				cellSet(&proposed.Budgets.Defaults, f, cellGet(old.Budgets.CellFor(""), f)+1+int64(r.IntN(1000)))
				return "budgets.defaults." + f
			}},
			widening{"budgets.per_verb.*." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string {
				verb := anyVerb(r)
				both(old, proposed, func(p *kairos.Policy) { clearLayer(p.Budgets.PerRiskTier, f) })
				raised := cellGet(old.Budgets.CellFor(verb), f) + 1 + int64(r.IntN(1000))
				editCell(proposed.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { cellSet(c, f, raised) })
				return "budgets.per_verb." + verb + "." + f
			}},
			widening{"budgets.per_verb.*." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string { // an override removed
				verb := anyVerb(r)
				both(old, proposed, func(p *kairos.Policy) {
					clearLayer(p.Budgets.PerRiskTier, f)
					cellSet(&p.Budgets.Defaults, f, 1000)
					editCell(p.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { cellSet(c, f, 5) })
				})
				editCell(proposed.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { cellSet(c, f, 0) })
				return "budgets.per_verb." + verb + "." + f
			}},
			widening{"budgets.per_risk_tier.*." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string {
				verb, tier := anyVerb(r), []string{"low", "medium", "high"}[r.IntN(3)]
				both(old, proposed, func(p *kairos.Policy) {
					editCell(p.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { c.RiskTier = tier })
				})
				raised := cellGet(old.Budgets.CellFor(verb), f) + 1 + int64(r.IntN(1000))
				editCell(proposed.Budgets.PerRiskTier, tier, func(c *kairos.CellBudget) { cellSet(c, f, raised) })
				return "budgets.per_risk_tier." + tier + "." + f
			}},
		)
	}
	return append(ws, riskTierWidenings()...)
}

// riskTierWidenings move cells to a richer tier.
func riskTierWidenings() []widening {
	tiers := func(p *kairos.Policy) {
		p.Budgets.PerRiskTier["low"] = kairos.CellBudget{TimeBudgetMS: 10, MaxToolCalls: 1}
		p.Budgets.PerRiskTier["high"] = kairos.CellBudget{TimeBudgetMS: 10_000_000, MaxToolCalls: 10_000}
	}
	return []widening{
		{"budgets.per_verb.*.risk_tier", func(r *rand.Rand, old, proposed *kairos.Policy) string {
			verb := anyVerb(r)
			both(old, proposed, func(p *kairos.Policy) {
				tiers(p)
				editCell(p.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { c.RiskTier = "low" })
			})
			editCell(proposed.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { c.RiskTier = "high" })
			return "budgets.per_verb." + verb + ".risk_tier"
		}},
		{"budgets.defaults.risk_tier", func(r *rand.Rand, old, proposed *kairos.Policy) string {
			both(old, proposed, func(p *kairos.Policy) { tiers(p); p.Budgets.Defaults.RiskTier = "low" })
			proposed.Budgets.Defaults.RiskTier = "high"
			return "budgets.defaults.risk_tier"
		}},
	}
}

// capNames are the caps of kairos.SpendCaps, by policy name.
var capNames = []string{"daily_tokens", "monthly_tokens", "daily_usd", "monthly_usd"}

// setCap sets a cap (nil: no cap) of a struct (kairos.SpendCaps or
// kairos.SpendPolicy) by its policy name, each time to a value of its own.
func setCap(structPtr any, name string, v *float64) {
	f := fieldByYAML(reflect.ValueOf(structPtr).Elem(), name)
	switch {
	case v == nil:
		f.SetZero()
	case f.Type().Elem().Kind() == reflect.Int64:
		n := int64(*v)
		f.Set(reflect.ValueOf(&n))
	default:
		x := *v
		f.Set(reflect.ValueOf(&x))
	}
}

func val(v float64) *float64 { return &v }

// raiseOrRemove is a cap above v, or none.
func raiseOrRemove(r *rand.Rand, v float64) *float64 {
	if coin(r) {
		return nil
	}
	return val(v + 1 + float64(r.IntN(1000)))
}

func spendWidenings() []widening {
	var ws []widening
	for _, f := range capNames {
		ws = append(ws,
			widening{"budgets.spend." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string {
				both(old, proposed, func(p *kairos.Policy) { setCap(&p.Budgets.Spend.SpendCaps, f, val(100)) })
				setCap(&proposed.Budgets.Spend.SpendCaps, f, raiseOrRemove(r, 100))
				return "budgets.spend." + f
			}},
			widening{"budgets.spend.per_user.*." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string {
				id := []string{"2001", "2002", "2003", "2999"}[r.IntN(4)]
				both(old, proposed, func(p *kairos.Policy) {
					setCap(&p.Budgets.Spend.SpendCaps, f, nil) // so that a removed override lifts the cap
					editCaps(p, id, func(c *kairos.SpendCaps) { setCap(c, f, val(50)) })
				})
				editCaps(proposed, id, func(c *kairos.SpendCaps) { setCap(c, f, raiseOrRemove(r, 50)) })
				return "budgets.spend.per_user." + id + "." + f
			}},
			widening{"budgets.spend.per_user.*." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string { // an override above everyone's
				both(old, proposed, func(p *kairos.Policy) {
					setCap(&p.Budgets.Spend.SpendCaps, f, val(50))
					delete(p.Budgets.Spend.PerUser, "2999")
				})
				editCaps(proposed, "2999", func(c *kairos.SpendCaps) { setCap(c, f, val(51+float64(r.IntN(100)))) })
				return "budgets.spend.per_user.2999." + f
			}},
		)
	}
	bot := func(name string) widening {
		return widening{"budgets.spend." + name, func(r *rand.Rand, old, proposed *kairos.Policy) string {
			both(old, proposed, func(p *kairos.Policy) { setCap(&p.Budgets.Spend, name, val(100)) })
			setCap(&proposed.Budgets.Spend, name, raiseOrRemove(r, 100))
			return "budgets.spend." + name
		}}
	}
	return append(ws, bot("bot_monthly_usd"), bot("bot_monthly_tokens"),
		widening{"budgets.spend.background_share", func(r *rand.Rand, old, proposed *kairos.Policy) string {
			both(old, proposed, func(p *kairos.Policy) { p.Budgets.Spend.BackgroundShare = val(0.5) })
			proposed.Budgets.Spend.BackgroundShare = []*float64{nil, val(0.9)}[r.IntN(2)]
			return "budgets.spend.background_share"
		}})
}

// priceNames are the prices of kairos.ModelPrice, by policy name.
var priceNames = []string{"input", "cached_input", "output", "audio_per_minute", "per_image"}

func priceWidenings() []widening {
	price := func() *kairos.ModelPrice {
		return &kairos.ModelPrice{Input: 3, CachedInput: 1, Output: 9, AudioPerMinute: 0.01, PerImage: 0.02}
	}
	var ws []widening
	for _, f := range priceNames {
		ws = append(ws, widening{"models.*.price." + f, func(r *rand.Rand, old, proposed *kairos.Policy) string {
			name := []string{"gpt-4o", "house-model"}[r.IntN(2)]
			both(old, proposed, func(p *kairos.Policy) { p.Models[name] = kairos.ModelSpec{Price: price()} })
			lower := price()
			fv := fieldByYAML(reflect.ValueOf(lower).Elem(), f)
			fv.SetFloat(fv.Float() / 2)
			proposed.Models[name] = kairos.ModelSpec{Price: lower}
			return "models." + name + ".price." + f
		}})
	}
	unpriced := func(key string, set func(a *kairos.AgentPolicy)) widening {
		return widening{key, func(r *rand.Rand, old, proposed *kairos.Policy) string {
			both(old, proposed, func(p *kairos.Policy) { p.Budgets.Spend.DailyUSD = val(1) })
			set(&proposed.Agent)
			return key
		}}
	}
	return append(ws,
		widening{"models.*.price", func(r *rand.Rand, old, proposed *kairos.Policy) string {
			both(old, proposed, func(p *kairos.Policy) { p.Models["house-model"] = kairos.ModelSpec{Price: price()} })
			proposed.Models["house-model"] = kairos.ModelSpec{ContextWindow: 8000}
			return "models.house-model.price"
		}},
		unpriced("agent.model", func(a *kairos.AgentPolicy) { a.Model = "mystery-model" }),
		unpriced("agent.fallback_models", func(a *kairos.AgentPolicy) {
			a.FallbackModels = append(a.FallbackModels[:len(a.FallbackModels):len(a.FallbackModels)], "mystery-model")
		}),
		unpriced("agent.embedding_model", func(a *kairos.AgentPolicy) { a.EmbeddingModel = "mystery-embedder" }),
	)
}
