package usage

import (
	"context"
	"sync"

	"github.com/kairos-agent/kairos"
)

// One model call through the guard: Begin admits it and holds its
// expected use against the caps until it settles (done), so calls in
// flight count before they are recorded. While the user has a cap their
// calls run one at a time; the bot's monthly cap is shared by everyone's
// calls in flight at once, each holding a slot of what it is expected to
// use: a call that would find the cap full once the calls in flight
// settle waits for them, then is admitted or refused on what they used.
// Concurrent turns therefore overshoot the bot's cap by what the calls in
// flight used beyond their estimates, not by one call per worker.

// Begin implements kairos.SpendGate. The policy is read once.
func (g *Guard) Begin(ctx context.Context, sc kairos.SpendContext, est kairos.UsageRecord) (func(context.Context, *kairos.UsageRecord), error) {
	r := g.ruleFor(sc)
	var acct, bot *account
	release := func() {}
	if r.caps.Any() {
		acct = g.account(sc.UserKey)
		select {
		case acct.slot <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		release = func() { <-acct.slot }
	}
	if r.bot {
		bot = g.account(BotKey)
	}
	amt := priceOf(r.pol, &est)
	if err := g.reserve(ctx, sc, r, acct, bot, est, amt); err != nil {
		release()
		return nil, err
	}
	var once sync.Once
	return func(ctx context.Context, used *kairos.UsageRecord) {
		once.Do(func() {
			if used != nil {
				g.recordFor(ctx, sc, used)
			}
			g.unhold(acct, bot, amt)
			release()
		})
	}, nil
}

// Capped implements kairos.SpendGate.
func (g *Guard) Capped(userKey string) bool {
	r := ruleOf(&g.cfg.Policy().Budgets.Spend, userKey)
	return r.caps.Any() || r.bot
}

// Admit checks whether a call for sc would be admitted now, holding
// nothing: nil, or a *kairos.SpendRefusal naming the cap reached and when
// it resets.
func (g *Guard) Admit(ctx context.Context, sc kairos.SpendContext) error {
	r := g.ruleFor(sc)
	var acct, bot *account
	if r.caps.Any() {
		acct = g.account(sc.UserKey)
	}
	if r.bot {
		bot = g.account(BotKey)
	}
	_, err := g.check(ctx, sc, r, acct, bot, kairos.UsageRecord{Estimated: true}, kairos.SpendAmount{}, false)
	return err
}

// recordFor records a call made for sc.
func (g *Guard) recordFor(ctx context.Context, sc kairos.SpendContext, rec *kairos.UsageRecord) {
	rec.UserKey = or(rec.UserKey, sc.UserKey)
	rec.ThreadKey = or(rec.ThreadKey, sc.ThreadKey)
	rec.SessionID = or(rec.SessionID, sc.SessionID)
	rec.Kind = or(rec.Kind, sc.Kind)
	if err := g.Record(ctx, rec); err != nil {
		g.log.Warn("record usage", "model", rec.Model, "err", err)
	}
}

// priceOf is what rec uses of the caps at pol's prices.
func priceOf(pol *kairos.Policy, rec *kairos.UsageRecord) kairos.SpendAmount {
	usd := 0.0
	if spec, ok := pol.Model(rec.Model); ok {
		usd, _ = kairos.UsageCost(spec.Price, rec)
	}
	return kairos.SpendAmount{Tokens: int64(rec.PromptTokens + rec.CompletionTokens), CostUSD: usd}
}

// reserve admits a call and holds amt for it, waiting while the calls in
// flight fill a cap that the call would otherwise be admitted under.
func (g *Guard) reserve(ctx context.Context, sc kairos.SpendContext, r rule, acct, bot *account, est kairos.UsageRecord, amt kairos.SpendAmount) error {
	if acct == nil && bot == nil {
		return nil
	}
	for {
		settled := g.settled() // before the check: a settle in between is not missed
		full, err := g.check(ctx, sc, r, acct, bot, est, amt, true)
		if err != nil || !full {
			return err
		}
		g.waiting.Add(1)
		select {
		case <-settled:
		case <-ctx.Done():
		}
		g.waiting.Add(-1)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// check decides one call against the caps of acct (the user's, nil when
// none) and bot (nil when none): a refusal, or full (the calls in flight
// fill a cap: wait for them), or admitted, and then, with hold, amt is
// held on both accounts.
func (g *Guard) check(ctx context.Context, sc kairos.SpendContext, r rule, acct, bot *account, est kairos.UsageRecord, amt kairos.SpendAmount, hold bool) (full bool, err error) {
	share := 1.0
	if sc.Kind == kairos.SpendTask {
		share = r.sp.Background()
	}
	now := g.cfg.Now()
	var user, botLs []limit
	for _, a := range []*account{acct, bot} {
		if a == nil {
			continue
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if err := g.fresh(ctx, a, now); err != nil {
			return false, err
		}
	}
	if acct != nil {
		user = fillAll(userLimits(r.caps), acct)
	}
	if bot != nil {
		botLs = fillAll(botLimits(r.sp), bot)
	}
	hit, s := firstReached(user, share, sc.Kind == kairos.SpendTask), share
	if hit == nil {
		hit, s = firstReached(botLs, 1, false), 1
	}
	if hit != nil {
		g.capReached(ctx, sc.UserKey, hit, now)
		return false, &kairos.SpendRefusal{Message: refusal(hit, s, sc.Kind, now)}
	}
	if !est.Estimated { // the call's use is known: one that would go past is refused
		l, s := wouldPass(user, share, amt), share
		if l == nil {
			l, s = wouldPass(botLs, 1, amt), 1
		}
		if l != nil {
			return false, &kairos.SpendRefusal{Message: overRefusal(l, s, est, l.of(amt), now)}
		}
	}
	if fills(user, share, amt, !est.Estimated) || fills(botLs, 1, amt, !est.Estimated) {
		return true, nil
	}
	if hold {
		for _, a := range []*account{acct, bot} {
			if a != nil {
				a.held = addAmount(a.held, amt)
			}
		}
	}
	return false, nil
}

// unhold gives back what a settled call held, and wakes the calls that
// wait for it.
func (g *Guard) unhold(acct, bot *account, amt kairos.SpendAmount) {
	if acct == nil && bot == nil {
		return
	}
	for _, a := range []*account{acct, bot} {
		if a != nil {
			a.mu.Lock()
			a.held = kairos.SpendAmount{Tokens: a.held.Tokens - amt.Tokens, CostUSD: a.held.CostUSD - amt.CostUSD}
			a.mu.Unlock()
		}
	}
	g.wake()
}

func fillAll(ls []limit, a *account) []limit {
	for i := range ls {
		ls[i].fill(a)
	}
	return ls
}

// wouldPass is the first limit of ls that a call using amt would go past
// once it is recorded (the calls in flight aside).
func wouldPass(ls []limit, share float64, amt kairos.SpendAmount) *limit {
	for i := range ls {
		if l := &ls[i]; !l.lifted && l.used()+l.of(amt) > l.cap*share {
			return l
		}
	}
	return nil
}

// fills reports whether the calls in flight fill a limit of ls that the
// call would otherwise be admitted under (exact: with the call's own use).
func fills(ls []limit, share float64, amt kairos.SpendAmount, exact bool) bool {
	for i := range ls {
		l := &ls[i]
		if l.lifted || l.held <= 0 {
			continue
		}
		need := l.used() + l.held
		if exact {
			need += l.of(amt)
			if need > l.cap*share {
				return true
			}
			continue
		}
		if need >= l.cap*share {
			return true
		}
	}
	return false
}

func addAmount(x, y kairos.SpendAmount) kairos.SpendAmount {
	return kairos.SpendAmount{Tokens: x.Tokens + y.Tokens, CostUSD: x.CostUSD + y.CostUSD}
}
