package usage

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
)

// BotKey is the account of the whole bot (its monthly cap and lifts).
const BotKey = "bot"

// Recorder stores one call's usage (kairos.SessionStore has it).
type Recorder interface {
	RecordUsage(ctx context.Context, rec *kairos.UsageRecord) error
}

// Metrics counts tokens and cost by model (no user in the labels).
type Metrics interface {
	Spend(model string, prompt, cached, completion int, usd float64)
}

// Config wires a Guard.
type Config struct {
	Store    kairos.UsageStore
	Recorder Recorder
	Policy   func() *kairos.Policy
	// Zone is the user's own zone (days and months of caps); nil or a
	// nil answer is UTC.
	Zone func(ctx context.Context, userKey string) *time.Location
	// Notify tells a user something (the 80% notice); NotifyOperators
	// tells every operator (a cap reached). Either may be nil.
	Notify          func(ctx context.Context, userKey, text string)
	NotifyOperators func(ctx context.Context, text string)
	Metrics         Metrics
	// Refresh is how long totals read from the database are trusted
	// before they are read again (other replicas' calls); 30 s when 0.
	Refresh time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
}

// Guard prices, records and caps model calls.
type Guard struct {
	cfg   Config
	log   *slog.Logger
	mu    sync.Mutex
	accts map[string]*account
	// notify and notifyOps start as Config's; Attach replaces them once
	// the bot runs (guarded by mu).
	notify    func(ctx context.Context, userKey, text string)
	notifyOps func(ctx context.Context, text string)
}

// Attach sets where notices go (the bot, once it runs): to a user, and to
// every operator.
func (g *Guard) Attach(user func(ctx context.Context, userKey, text string), operators func(ctx context.Context, text string)) {
	g.mu.Lock()
	g.notify, g.notifyOps = user, operators
	g.mu.Unlock()
}

func (g *Guard) notifiers() (func(ctx context.Context, userKey, text string), func(ctx context.Context, text string)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notify, g.notifyOps
}

var _ kairos.SpendGate = (*Guard)(nil)

// New returns a Guard.
func New(cfg Config) *Guard {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Guard{cfg: cfg, log: cfg.Logger.With("component", "usage"), accts: map[string]*account{},
		notify: cfg.Notify, notifyOps: cfg.NotifyOperators}
}

// account holds the totals of one user (or of the bot) for the current
// day and month of its zone.
type account struct {
	key  string
	slot chan struct{} // one model call at a time while capped

	mu         sync.Mutex
	loaded     time.Time
	zone       *time.Location
	day, month string // period keys: 2026-11-25, 2026-11
	dayUsed    kairos.SpendAmount
	monthUsed  kairos.SpendAmount
	lifted     map[string]bool
	lastTask   kairos.SpendAmount // the latest scheduled-task call: what the next is likely to cost
}

func (g *Guard) account(key string) *account {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.accts[key]
	if a == nil {
		a = &account{key: key, slot: make(chan struct{}, 1)}
		g.accts[key] = a
	}
	return a
}

// known returns the account of key when there is one.
func (g *Guard) known(key string) *account {
	if key == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.accts[key]
}

// periods returns the day and month keys of now in loc and when each
// started.
func periods(now time.Time, loc *time.Location) (day, month string, dayStart, monthStart time.Time) {
	l := now.In(loc)
	dayStart = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
	monthStart = time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
	return l.Format("2006-01-02"), l.Format("2006-01"), dayStart, monthStart
}

// fresh brings a's totals up to date for now; the caller holds a.mu.
// Within the same periods the larger of the cached and the stored totals
// wins: this replica's calls may still wait in a turn's deferred writes,
// other replicas' calls only the database knows.
func (g *Guard) fresh(ctx context.Context, a *account, now time.Time) error {
	if a.zone != nil {
		day, month, _, _ := periods(now, a.zone)
		if day == a.day && month == a.month && now.Sub(a.loaded) < g.cfg.Refresh && now.After(a.loaded.Add(-time.Minute)) {
			return nil
		}
	}
	loc := time.UTC
	if a.key != BotKey && g.cfg.Zone != nil {
		if z := g.cfg.Zone(ctx, a.key); z != nil {
			loc = z
		}
	}
	day, month, dayStart, monthStart := periods(now, loc)
	user := a.key
	if user == BotKey {
		user = ""
	}
	m, d, err := g.cfg.Store.SpendSince(ctx, user, monthStart, dayStart)
	if err != nil {
		return err
	}
	lifts, err := g.cfg.Store.SpendLifts(ctx, a.key, day, month)
	if err != nil {
		return err
	}
	if month == a.month && a.zone != nil && a.zone.String() == loc.String() {
		m = maxAmount(m, a.monthUsed)
		if day == a.day {
			d = maxAmount(d, a.dayUsed)
		}
	}
	a.zone, a.day, a.month, a.dayUsed, a.monthUsed, a.lifted, a.loaded = loc, day, month, d, m, lifts, now
	return nil
}

func maxAmount(x, y kairos.SpendAmount) kairos.SpendAmount {
	return kairos.SpendAmount{Tokens: max(x.Tokens, y.Tokens), CostUSD: max(x.CostUSD, y.CostUSD)}
}

// userID is the Telegram (or terminal) user id of a user key, 0 when
// there is none.
func userID(userKey string) int64 {
	_, id, ok := strings.Cut(userKey, ":")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// rule is the spend policy in force for one call, read once: the user's
// caps and whether the bot has a cap of its own.
type rule struct {
	sp   *kairos.SpendPolicy
	caps kairos.SpendCaps
	bot  bool
}

// ruleOf is the rule of sp for a call of userKey.
func ruleOf(sp *kairos.SpendPolicy, userKey string) rule {
	r := rule{sp: sp, bot: sp.BotMonthlyUSD != nil || sp.BotMonthlyTokens != nil}
	if userKey != "" {
		r.caps = sp.CapsFor(userID(userKey))
	}
	return r
}

// ruleFor reads the policy once for a call of sc.
func (g *Guard) ruleFor(sc kairos.SpendContext) rule {
	return ruleOf(&g.cfg.Policy().Budgets.Spend, sc.UserKey)
}

// free says whether nothing caps the call: a summary, or no cap at all.
func (r rule) free(sc kairos.SpendContext) bool {
	return sc.Kind == kairos.SpendSummary || (!r.caps.Any() && !r.bot)
}

// Begin is the check before one model call: while the user has a cap it
// waits for the user's call in flight to end (so concurrent turns
// overshoot by at most one call), then admits or refuses. release ends
// the call (after Record); it is never nil. The policy is read once.
func (g *Guard) Begin(ctx context.Context, sc kairos.SpendContext) (release func(), err error) {
	r := g.ruleFor(sc)
	if r.free(sc) {
		return func() {}, nil
	}
	release = func() {}
	if r.caps.Any() {
		a := g.account(sc.UserKey)
		select {
		case a.slot <- struct{}{}:
		case <-ctx.Done():
			return release, ctx.Err()
		}
		release = func() { <-a.slot }
	}
	if err := g.admit(ctx, sc, r); err != nil {
		release()
		return func() {}, err
	}
	return release, nil
}

// Admit implements kairos.SpendGate: nil, or a *kairos.SpendRefusal
// naming the cap reached and when it resets.
func (g *Guard) Admit(ctx context.Context, sc kairos.SpendContext) error {
	return g.admit(ctx, sc, g.ruleFor(sc))
}

func (g *Guard) admit(ctx context.Context, sc kairos.SpendContext, r rule) error {
	if r.free(sc) {
		return nil
	}
	now := g.cfg.Now()
	share := 1.0
	if sc.Kind == kairos.SpendTask {
		share = r.sp.Background()
	}
	var hit *limit
	if r.caps.Any() {
		ls, err := g.limitsOf(ctx, g.account(sc.UserKey), userLimits(r.caps), now)
		if err != nil {
			return err
		}
		hit = firstReached(ls, share, sc.Kind == kairos.SpendTask)
	}
	if hit == nil && r.bot {
		ls, err := g.limitsOf(ctx, g.account(BotKey), botLimits(r.sp), now)
		if err != nil {
			return err
		}
		hit = firstReached(ls, 1, false)
	}
	if hit == nil {
		return nil
	}
	g.capReached(ctx, sc.UserKey, hit, now)
	return &kairos.SpendRefusal{Message: refusal(hit, share, sc.Kind, now)}
}

// limitsOf fills the used amounts of ls from a's fresh totals.
func (g *Guard) limitsOf(ctx context.Context, a *account, ls []limit, now time.Time) ([]limit, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := g.fresh(ctx, a, now); err != nil {
		return nil, err
	}
	for i := range ls {
		ls[i].fill(a)
	}
	return ls, nil
}

// firstReached is the first limit of ls reached at share of it; for a
// scheduled task also the first its call would go past, judged by what
// the user's last task call cost (a task that would exceed is skipped).
func firstReached(ls []limit, share float64, task bool) *limit {
	for i := range ls {
		l := &ls[i]
		if l.lifted {
			continue
		}
		if l.used() >= l.cap*share || (task && l.ahead > 0 && l.used()+l.ahead > l.cap*share) {
			return l
		}
	}
	return nil
}

// capReached tells the operators, once per user, cap and period.
func (g *Guard) capReached(ctx context.Context, userKey string, l *limit, now time.Time) {
	who := l.acct
	if who != BotKey {
		who = userKey
	}
	first, err := g.cfg.Store.MarkSpendNotice(ctx, who, "cap:"+l.name+":"+l.period, now)
	if err != nil {
		g.log.Warn("record cap notice", "err", err)
		return
	}
	if _, ops := g.notifiers(); first && ops != nil {
		text := operatorNotice(userKey, l, now)
		_ = kairos.AfterTurn(ctx, func(ctx context.Context) error { ops(ctx, text); return nil })
	}
}
