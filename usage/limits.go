package usage

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
)

// limit is one cap as it stands for an account now.
type limit struct {
	name   string // daily_tokens, monthly_usd, … (the policy key)
	acct   string // BotKey for the bot's caps, else "user"
	tokens bool   // counts tokens (else US dollars)
	daily  bool
	cap    float64

	amount kairos.SpendAmount
	held   float64 // what the calls in flight are expected to use, in the limit's unit
	ahead  float64 // what the user's last scheduled-task call cost, in the limit's unit
	period string  // the day or month key it counts in
	lifted bool
	win    window // the window it counts in
}

func (l *limit) fill(a *account) {
	l.win = a.month
	if l.daily {
		l.win = a.day
	}
	l.period = l.win.Key
	l.amount = a.monthUsed
	if l.daily {
		l.amount = a.dayUsed
	}
	l.lifted = a.lifted[l.period]
	l.ahead, l.held = l.of(a.lastTask), l.of(a.held)
}

// of is amt in the limit's unit.
func (l *limit) of(amt kairos.SpendAmount) float64 {
	if l.tokens {
		return float64(amt.Tokens)
	}
	return amt.CostUSD
}

func (l *limit) used() float64 { return l.of(l.amount) }

// resets is when the limit's window ends (a midnight, or the first of a
// month, in the zone it was opened in).
func (l *limit) resets() time.Time { return l.win.End }

func userLimits(c kairos.SpendCaps) []limit {
	var ls []limit
	add := func(name string, tokens, daily bool, v float64) {
		ls = append(ls, limit{name: name, acct: "user", tokens: tokens, daily: daily, cap: v})
	}
	if c.DailyTokens != nil {
		add("daily_tokens", true, true, float64(*c.DailyTokens))
	}
	if c.DailyUSD != nil {
		add("daily_usd", false, true, *c.DailyUSD)
	}
	if c.MonthlyTokens != nil {
		add("monthly_tokens", true, false, float64(*c.MonthlyTokens))
	}
	if c.MonthlyUSD != nil {
		add("monthly_usd", false, false, *c.MonthlyUSD)
	}
	return ls
}

func botLimits(sp *kairos.SpendPolicy) []limit {
	var ls []limit
	if sp.BotMonthlyTokens != nil {
		ls = append(ls, limit{name: "bot_monthly_tokens", acct: BotKey, tokens: true, cap: float64(*sp.BotMonthlyTokens)})
	}
	if sp.BotMonthlyUSD != nil {
		ls = append(ls, limit{name: "bot_monthly_usd", acct: BotKey, cap: *sp.BotMonthlyUSD})
	}
	return ls
}

// Record prices one call at the prices in force now, adds it to the
// cached totals, stores it, counts it in the metrics, and gives the
// notices it earns (80% of a user's cap to the user; a cap reached, and
// 80% of the bot's, to the operators). Who it was for comes from the
// SpendContext of ctx where rec does not say.
func (g *Guard) Record(ctx context.Context, rec *kairos.UsageRecord) error {
	pol := g.cfg.Policy()
	if spec, ok := pol.Model(rec.Model); ok {
		rec.CostUSD, rec.Priced = kairos.UsageCost(spec.Price, rec)
	}
	if sc, ok := kairos.SpendOf(ctx); ok {
		rec.UserKey = or(rec.UserKey, sc.UserKey)
		rec.ThreadKey = or(rec.ThreadKey, sc.ThreadKey)
		rec.SessionID = or(rec.SessionID, sc.SessionID)
		rec.Kind = or(rec.Kind, sc.Kind)
	}
	rec.Kind = or(rec.Kind, kairos.SpendChat)
	now := g.cfg.Now()
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	sp := &pol.Budgets.Spend
	r := ruleOf(sp, rec.UserKey)
	caps, bot := r.caps, r.bot
	amt := kairos.SpendAmount{Tokens: int64(rec.PromptTokens + rec.CompletionTokens), CostUSD: rec.CostUSD}
	var crossed []crossing
	// An account kept from earlier caps is kept up to date too, so caps
	// that come back with a reload start from the right totals.
	if a := g.known(rec.UserKey); caps.Any() || a != nil {
		crossed = append(crossed, g.add(ctx, g.account(rec.UserKey), userLimits(caps), amt, rec.Kind, sp.Notice(), now)...)
	}
	if a := g.known(BotKey); bot || a != nil {
		crossed = append(crossed, g.add(ctx, g.account(BotKey), botLimits(sp), amt, rec.Kind, sp.Notice(), now)...)
	}
	if g.cfg.Metrics != nil {
		g.cfg.Metrics.Spend(rec.Model, rec.PromptTokens, rec.CachedTokens, rec.CompletionTokens, rec.CostUSD)
	}
	err := g.cfg.Recorder.RecordUsage(ctx, rec)
	for _, c := range crossed {
		g.notice(ctx, rec.UserKey, c, now)
	}
	return err
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// crossing is a threshold one call went over: the notice share of a cap
// (notice) or the cap itself.
type crossing struct {
	l      limit
	notice bool
}

// add adds amt to a's totals (fresh first, so the stored row is never
// counted twice) and returns the thresholds of ls it crossed.
func (g *Guard) add(ctx context.Context, a *account, ls []limit, amt kairos.SpendAmount, kind string, share float64, now time.Time) []crossing {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := g.fresh(ctx, a, now); err != nil {
		g.log.Warn("read usage totals", "err", err)
		if a.loaded.IsZero() {
			return nil
		}
	}
	g.anchorWindows(ctx, a)
	before := make([]float64, len(ls))
	for i := range ls {
		ls[i].fill(a)
		before[i] = ls[i].used()
	}
	add := func(x kairos.SpendAmount) kairos.SpendAmount {
		return kairos.SpendAmount{Tokens: x.Tokens + amt.Tokens, CostUSD: x.CostUSD + amt.CostUSD}
	}
	a.dayUsed, a.monthUsed = add(a.dayUsed), add(a.monthUsed)
	if kind == kairos.SpendTask {
		a.lastTask = amt
	}
	var out []crossing
	for i := range ls {
		l := &ls[i]
		l.fill(a)
		after := l.used()
		switch {
		case l.cap > 0 && before[i] < l.cap && after >= l.cap:
			out = append(out, crossing{l: *l})
		case l.cap > 0 && before[i] < share*l.cap && after >= share*l.cap:
			out = append(out, crossing{l: *l, notice: true})
		}
	}
	return out
}
