package obs

// Cost accounting (package usage): tokens and dollars by model. No user
// ids in the labels: the per-user view is /usage and `kairos usage`.

func (m *Metrics) declareUsage() {
	m.declare("kairos_tokens_total", "counter", "Tokens of model calls by model and kind (prompt, cached, completion); cached tokens are part of prompt.", nil)
	m.declare("kairos_cost_usd_total", "counter", "Cost in US dollars of model calls by model, at the prices in force (models without a price add 0).", nil)
}

// Spend counts one model call's tokens and cost.
func (m *Metrics) Spend(model string, prompt, cached, completion int, usd float64) {
	m.add("kairos_tokens_total", float64(prompt), "model", model, "kind", "prompt")
	m.add("kairos_tokens_total", float64(cached), "model", model, "kind", "cached")
	m.add("kairos_tokens_total", float64(completion), "model", model, "kind", "completion")
	m.add("kairos_cost_usd_total", usd, "model", model)
}
