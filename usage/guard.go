package usage

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// Anchors keeps the windows calls were counted in (window.go); nil
	// keeps them in memory only.
	Anchors Anchors
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
	// settle is closed (and replaced) whenever a call in flight settles;
	// waiting counts the calls waiting for it.
	settle  chan struct{}
	waiting atomic.Int64
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

// settled returns the channel closed when a call in flight next settles.
func (g *Guard) settled() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settle
}

// wake tells the calls waiting on a full cap that one in flight settled.
func (g *Guard) wake() {
	g.mu.Lock()
	close(g.settle)
	g.settle = make(chan struct{})
	g.mu.Unlock()
}

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
		notify: cfg.Notify, notifyOps: cfg.NotifyOperators,
		settle: make(chan struct{})}
}

// account holds the totals of one user (or of the bot) for the current
// day and month windows of its zone (window.go).
type account struct {
	key  string
	slot chan struct{} // one model call at a time while capped

	mu         sync.Mutex
	loaded     time.Time
	day, month window   // the windows in force at the last reload
	anchor     anchored // the last windows a call was recorded in
	dayUsed    kairos.SpendAmount
	monthUsed  kairos.SpendAmount
	held       kairos.SpendAmount // what the calls in flight are expected to use (call.go)
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

// zoneOf is the zone of an account's caps: the user's own, UTC for the
// bot.
func (g *Guard) zoneOf(ctx context.Context, key string) *time.Location {
	if key != BotKey && g.cfg.Zone != nil {
		if z := g.cfg.Zone(ctx, key); z != nil {
			return z
		}
	}
	return time.UTC
}

// fresh brings a's totals up to date for now; the caller holds a.mu.
// Within the same windows the larger of the cached and the stored totals
// wins: this replica's calls may still wait in a turn's deferred writes,
// other replicas' calls only the database knows.
func (g *Guard) fresh(ctx context.Context, a *account, now time.Time) error {
	if a.day.holds(now) && a.month.holds(now) && now.Sub(a.loaded) < g.cfg.Refresh && now.After(a.loaded.Add(-time.Minute)) {
		return nil
	}
	loc := g.zoneOf(ctx, a.key)
	an, err := g.loadAnchors(ctx, a.key)
	if err != nil {
		return err
	}
	an.Day, an.Month = later(an.Day, a.anchor.Day), later(an.Month, a.anchor.Month)
	day, month := windowFor(dayKind, now, loc, an.Day), windowFor(monthKind, now, loc, an.Month)
	user := a.key
	if user == BotKey {
		user = ""
	}
	m, d, err := g.spendIn(ctx, user, month.Start, day.Start)
	if err != nil {
		return err
	}
	lifts, err := g.cfg.Store.SpendLifts(ctx, a.key, day.Key, month.Key)
	if err != nil {
		return err
	}
	if !a.loaded.IsZero() && a.month.Start.Equal(month.Start) {
		m = maxAmount(m, a.monthUsed)
	}
	if !a.loaded.IsZero() && a.day.Start.Equal(day.Start) {
		d = maxAmount(d, a.dayUsed)
	}
	a.day, a.month, a.anchor, a.dayUsed, a.monthUsed, a.lifted, a.loaded = day, month, an, d, m, lifts, now
	return nil
}

// spendIn sums user's calls since monthStart and since dayStart (a day
// window anchored before a zone change may begin before the month's).
func (g *Guard) spendIn(ctx context.Context, user string, monthStart, dayStart time.Time) (m, d kairos.SpendAmount, err error) {
	if !dayStart.Before(monthStart) {
		return g.cfg.Store.SpendSince(ctx, user, monthStart, dayStart)
	}
	if d, _, err = g.cfg.Store.SpendSince(ctx, user, dayStart, dayStart); err != nil {
		return m, d, err
	}
	m, _, err = g.cfg.Store.SpendSince(ctx, user, monthStart, monthStart)
	return m, d, err
}

// later is the later of two anchored windows.
func later(x, y window) window {
	if y.Start.After(x.Start) {
		return y
	}
	return x
}

// anchor fixes a's current windows once a call is recorded in them, so
// that a zone change cannot reopen them; the caller holds a.mu.
func (g *Guard) anchorWindows(ctx context.Context, a *account) {
	if a.anchor.Day == a.day && a.anchor.Month == a.month {
		return
	}
	a.anchor.Day, a.anchor.Month = a.day, a.month
	if err := g.saveAnchors(ctx, a.key, a.anchor); err != nil {
		g.log.Warn("record the spending windows", "err", err)
	}
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
	pol  *kairos.Policy
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
	pol := g.cfg.Policy()
	r := ruleOf(&pol.Budgets.Spend, sc.UserKey)
	r.pol = pol
	return r
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
