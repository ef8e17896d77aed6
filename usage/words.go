package usage

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// notice gives the notice one crossing earns, once.
func (g *Guard) notice(ctx context.Context, userKey string, c crossing, now time.Time) {
	l := c.l
	if !c.notice {
		g.capReached(ctx, userKey, &l, now)
		return
	}
	who := userKey
	if l.acct == BotKey {
		who = BotKey
	}
	first, err := g.cfg.Store.MarkSpendNotice(ctx, who, "notice:"+l.name+":"+l.period, now)
	if err != nil {
		g.log.Warn("record spending notice", "err", err)
		return
	}
	if !first {
		return
	}
	pct := int(math.Round(g.cfg.Policy().Budgets.Spend.Notice() * 100))
	user, ops := g.notifiers()
	if l.acct == BotKey {
		if ops != nil {
			text := fmt.Sprintf("The bot has used %d%% of its %s (%s of %s); it resets %s.",
				pct, capName(&l), Amount(l.tokens, l.used()), Amount(l.tokens, l.cap), resetText(&l, now))
			_ = kairos.AfterTurn(ctx, func(ctx context.Context) error { ops(ctx, text); return nil })
		}
		return
	}
	if user != nil {
		text := fmt.Sprintf("Heads-up: you have used %d%% of your %s (%s of %s). It resets %s.",
			pct, capName(&l), Amount(l.tokens, l.used()), Amount(l.tokens, l.cap), resetText(&l, now))
		_ = kairos.AfterTurn(ctx, func(ctx context.Context) error { user(ctx, userKey, text); return nil })
	}
}

// refusal is the one sentence a refused call gets.
func refusal(l *limit, share float64, kind string, now time.Time) string {
	prefix := ""
	if kind == kairos.SpendTask {
		prefix = "Skipped this scheduled task: "
	}
	switch {
	case l.acct == BotKey:
		return prefix + fmt.Sprintf("The bot has reached its %s of %s for everyone this month; it resets %s.",
			capName(l), Amount(l.tokens, l.cap), resetText(l, now))
	case l.cap == 0:
		return prefix + fmt.Sprintf("You cannot use the model: your %s is 0. An operator can change that in the policy.", capName(l))
	case kind == kairos.SpendTask && l.used() < l.cap*share:
		left := max(l.cap*share-l.used(), 0)
		return prefix + fmt.Sprintf("it would go past your %s of %s: its last run used %s and %s is left; it resets %s.",
			capName(l), Amount(l.tokens, l.cap), Amount(l.tokens, l.ahead), Amount(l.tokens, left), resetText(l, now))
	case share < 1:
		return prefix + fmt.Sprintf("scheduled tasks may use %d%% of your %s of %s, and that is used up; it resets %s.",
			int(math.Round(share*100)), capName(l), Amount(l.tokens, l.cap), resetText(l, now))
	}
	s := fmt.Sprintf("you have reached your %s of %s; it resets %s.", capName(l), Amount(l.tokens, l.cap), resetText(l, now))
	if prefix == "" {
		return "You" + strings.TrimPrefix(s, "you")
	}
	return prefix + s
}

// operatorNotice tells the operators that someone reached a cap.
func operatorNotice(userKey string, l *limit, now time.Time) string {
	if l.acct == BotKey {
		return fmt.Sprintf("The bot reached its %s (%s); every model call is refused until it resets %s. Lift it for this month with /usage lift bot.",
			capName(l), Amount(l.tokens, l.cap), resetText(l, now))
	}
	id := strconv.FormatInt(userID(userKey), 10)
	return fmt.Sprintf("User %s reached their %s (%s); it resets %s. Lift it until then with /usage lift %s.",
		id, capName(l), Amount(l.tokens, l.cap), resetText(l, now), id)
}

func capName(l *limit) string {
	unit := "spending"
	if l.tokens {
		unit = "token"
	}
	period := "monthly"
	if l.daily {
		period = "daily"
	}
	return period + " " + unit + " limit"
}

// resetText says when a limit resets, in the account's own zone.
func resetText(l *limit, now time.Time) string {
	at := l.resets()
	zone := l.win.Zone
	if zone == "Local" || zone == "" {
		zone = "UTC"
	}
	if l.daily {
		return fmt.Sprintf("at midnight (%s), in %s", zone, Span(at.Sub(now)))
	}
	return fmt.Sprintf("on %s at 00:00 (%s)", at.Format("2 January"), zone)
}

// Span writes a duration as "5 h 12 min" or "40 min".
func Span(d time.Duration) string {
	m := int(math.Ceil(d.Minutes()))
	if m < 60 {
		return fmt.Sprintf("%d min", max(m, 1))
	}
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// Amount writes tokens ("50,000 tokens") or dollars ("$1.50").
func Amount(tokens bool, v float64) string {
	if tokens {
		return Thousands(int64(math.Round(v))) + " tokens"
	}
	return USD(v)
}

// USD writes dollars with cents, or four decimals under a cent.
func USD(v float64) string {
	if v > 0 && v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// Thousands writes n with thousands separators.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// overRefusal is the sentence of a call whose known use (amt, in l's
// unit) would go past l.
func overRefusal(l *limit, share float64, est kairos.UsageRecord, amt float64, now time.Time) string {
	what := "That call would use "
	if est.Audio > 0 {
		what = "Transcribing that recording (" + audioSpan(est.Audio) + ") would use "
	}
	whose := "your"
	if l.acct == BotKey {
		whose = "the bot's"
	}
	left := max(l.cap*share-l.used(), 0)
	return fmt.Sprintf("%s%s, more than the %s left of %s %s of %s; it resets %s.", what, Amount(l.tokens, amt),
		Amount(l.tokens, left), whose, capName(l), Amount(l.tokens, l.cap), resetText(l, now))
}

// audioSpan writes a recording's length: "42 s", "30 min", "1 h 5 min".
func audioSpan(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(math.Ceil(d.Seconds())))
	}
	return Span(d)
}
