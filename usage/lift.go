package usage

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Lift lifts every cap of userKey (BotKey: the bot's monthly caps) until
// it resets: for the current day and month of the account's zone. by is
// the operator. It returns what was lifted, in words.
func (g *Guard) Lift(ctx context.Context, userKey, by string) (string, error) {
	a := g.account(userKey)
	now := g.cfg.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := g.fresh(ctx, a, now); err != nil {
		return "", err
	}
	periods := []string{a.day.Key, a.month.Key}
	if userKey == BotKey {
		periods = []string{a.month.Key}
	}
	for _, p := range periods {
		if err := g.cfg.Store.LiftSpendCap(ctx, userKey, p, by, now); err != nil {
			return "", err
		}
		a.lifted[p] = true
	}
	if userKey == BotKey {
		return fmt.Sprintf("Lifted the bot's monthly caps until the end of %s (UTC).", a.month.Key), nil
	}
	return fmt.Sprintf("Lifted the caps of user %d: the daily ones for %s, the monthly ones for %s (%s).",
		userID(userKey), a.day.Key, a.month.Key, a.day.Zone), nil
}

// Status writes the caps in force for userKey, each with how much of it
// is used and whether an operator lifted it; "" when none applies.
func (g *Guard) Status(ctx context.Context, userKey string) (string, error) {
	r := ruleOf(&g.cfg.Policy().Budgets.Spend, userKey)
	sp, caps, bot := r.sp, r.caps, r.bot
	now := g.cfg.Now()
	var parts []string
	describe := func(key string, ls []limit) error {
		ls, err := g.limitsOf(ctx, g.account(key), ls, now)
		if err != nil {
			return err
		}
		for _, l := range ls {
			s := fmt.Sprintf("%s %s", capName(&l), Amount(l.tokens, l.cap))
			if key == BotKey {
				s = "the bot's " + s
			}
			switch {
			case l.lifted:
				s += " (lifted by an operator until it resets)"
			case l.cap > 0:
				s += fmt.Sprintf(" (%d%% used)", int(math.Floor(100*l.used()/l.cap)))
			default:
				s += " (no model use)"
			}
			parts = append(parts, s)
		}
		return nil
	}
	if caps.Any() {
		if err := describe(userKey, userLimits(caps)); err != nil {
			return "", err
		}
	}
	if bot {
		if err := describe(BotKey, botLimits(sp)); err != nil {
			return "", err
		}
	}
	if len(parts) == 0 {
		return "", nil
	}
	return "Caps: " + strings.Join(parts, "; ") + ".", nil
}

// BotMonth sums everyone's calls this month (UTC), for the operators.
func (g *Guard) BotMonth(ctx context.Context) (kairos.SpendAmount, error) {
	monthStart := monthKind.floor(g.cfg.Now().UTC())
	all, _, err := g.cfg.Store.SpendSince(ctx, "", monthStart, monthStart)
	return all, err
}
