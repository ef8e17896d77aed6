package usage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/usage"
)

// fixedModel answers every call with the same usage.
type fixedModel struct {
	prompt, completion int
	calls              atomic.Int64
	gate               func() // optional: runs inside each call
}

func (m *fixedModel) Chat(ctx context.Context, req kairos.ChatRequest, _ func(string)) (*kairos.ChatResponse, error) {
	m.calls.Add(1)
	if m.gate != nil {
		m.gate()
	}
	return &kairos.ChatResponse{Model: req.Model, Message: kairos.ChatMessage{Role: kairos.RoleAssistant, Content: "ok"},
		Usage: kairos.Usage{PromptTokens: m.prompt, CompletionTokens: m.completion}}, nil
}

type fixture struct {
	db    *store.DB
	pol   *kairos.Policy
	now   time.Time
	mu    sync.Mutex
	zone  *time.Location
	guard *usage.Guard
	model *usage.Model
	inner *fixedModel
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{db: storetest.MustOpenDB(tb), pol: kairos.DefaultPolicy(), now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), zone: time.UTC}
	f.guard = usage.New(usage.Config{Store: store.NewUsageStore(f.db), Recorder: store.NewSessionStore(f.db),
		Policy: func() *kairos.Policy { return f.pol }, Now: f.clock,
		Zone: func(context.Context, string) *time.Location { return f.zone }})
	f.inner = &fixedModel{prompt: 25, completion: 5}
	f.model = &usage.Model{Next: f.inner, Guard: f.guard}
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

func (f *fixture) call(ctx context.Context, user string) error {
	ctx = kairos.WithSpend(ctx, kairos.SpendContext{UserKey: user, Kind: kairos.SpendChat})
	_, err := f.model.Chat(ctx, kairos.ChatRequest{Model: "m"}, nil)
	return err
}

func ptr[T any](v T) *T { return &v }

func isRefusal(err error) bool {
	_, ok := kairos.AsSpendRefusal(err)
	return ok
}

// Calls of 30 tokens under a 100-token cap: 4 are made (0, 30, 60, 90
// are under it), the 5th is refused without reaching the model.
func TestCapRefusesTheCallAfterItIsReached(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
	ctx := context.Background()
	for i := range 4 {
		if err := f.call(ctx, "telegram:7"); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	err := f.call(ctx, "telegram:7")
	r, ok := kairos.AsSpendRefusal(err)
	if !ok || !strings.Contains(r.Message, "daily token limit of 100 tokens") {
		t.Fatalf("5th call: %v", err)
	}
	if n := f.inner.calls.Load(); n != 4 {
		t.Fatalf("model calls = %d, want 4", n)
	}
	// Someone else is not capped by it.
	if err := f.call(ctx, "telegram:8"); err != nil {
		t.Fatal(err)
	}
}

// While a user has a cap, their model calls run one at a time: a second
// call waits for the first (here it gives up with its context).
func TestCappedUsersCallsRunOneAtATime(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.MonthlyTokens = ptr(int64(1000))
	sc := kairos.SpendContext{UserKey: "telegram:7"}
	ctx := context.Background()
	est := kairos.UsageRecord{Model: "m", PromptTokens: 10, Estimated: true}
	release, err := f.guard.Begin(ctx, sc, est)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.guard.Begin(cctx, sc, est); !errors.Is(err, context.Canceled) {
		t.Fatalf("second call while the first is in flight: %v, want it to wait", err)
	}
	other, err := f.guard.Begin(ctx, kairos.SpendContext{UserKey: "telegram:8"}, est) // would hang if it waited
	if err != nil {
		t.Fatalf("another user's call waited: %v", err)
	}
	other(ctx, nil)
	release(ctx, nil)
	again, err := f.guard.Begin(ctx, sc, est)
	if err != nil {
		t.Fatal(err)
	}
	again(ctx, nil)
}

// Many concurrent turns of one user overshoot the cap by at most one
// call (hammer; run with -race).
func TestConcurrentCallsOvershootByAtMostOneCall(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
	// Each call stays in the model until the test lets it out, so calls
	// that were not made to wait would all be inside at once.
	entered, release := make(chan struct{}), make(chan struct{})
	f.inner.gate = func() { entered <- struct{}{}; <-release }
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-entered:
				release <- struct{}{}
			case <-done:
				return
			}
		}
	}()
	defer close(done)
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.call(context.Background(), "telegram:7") == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if used := ok.Load() * 30; used > 100+30 || ok.Load() != 4 {
		t.Fatalf("%d calls made (%d tokens) under a cap of 100", ok.Load(), used)
	}
}

// The day of a daily cap is the user's own: at 23:30 in Auckland the
// cap is reached; at 00:30 there (still the same UTC day) it is a new day.
func TestDailyCapResetsAtTheUsersMidnight(t *testing.T) {
	f := newFixture(t)
	f.zone, _ = time.LoadLocation("Pacific/Auckland")
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(30))
	f.set(time.Date(2026, 11, 25, 10, 30, 0, 0, time.UTC)) // 23:30 NZDT
	ctx := context.Background()
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	err := f.call(ctx, "telegram:7")
	r, ok := kairos.AsSpendRefusal(err)
	if !ok || !strings.Contains(r.Message, "resets at midnight (Pacific/Auckland), in 30 min") {
		t.Fatalf("at 23:30: %v", err)
	}
	f.set(time.Date(2026, 11, 25, 11, 30, 0, 0, time.UTC)) // 00:30 NZDT, 26 Nov
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatalf("after the user's midnight: %v", err)
	}
}

// A price applies from the policy reload on: calls before it stay
// tokens only, calls after it are priced.
func TestPriceAppliesFromReloadOn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	f.pol.Models = map[string]kairos.ModelSpec{"m": {Price: &kairos.ModelPrice{Input: 1000, Output: 2000}}}
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	days, err := usage.Days(ctx, store.NewUsageStore(f.db), nil, "telegram:7", "2026-11-25", f.clock())
	if err != nil || len(days) != 1 {
		t.Fatalf("days = %+v, %v", days, err)
	}
	d := days[0]
	// 25×1000/1e6 + 5×2000/1e6 = $0.035 for the priced call only.
	if d.Calls != 2 || d.UnpricedCalls != 1 || fmt.Sprintf("%.4f", d.CostUSD) != "0.0350" || d.Tokens() != 60 {
		t.Fatalf("day = %+v", d)
	}
}

// A cap of 0 is said plainly, and summaries are refused like every other
// call (they were counted but never refused).
func TestCapZeroAndSummaries(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.MonthlyUSD = ptr(0.0)
	ctx := context.Background()
	r, ok := kairos.AsSpendRefusal(f.call(ctx, "telegram:7"))
	if !ok || r.Message != "You cannot use the model: your monthly spending limit is 0. An operator can change that in the policy." {
		t.Fatalf("cap 0: %+v", r)
	}
	sctx := kairos.WithSpend(ctx, kairos.SpendContext{UserKey: "telegram:7", Kind: kairos.SpendSummary})
	if _, err := f.model.Chat(sctx, kairos.ChatRequest{Model: "m"}, nil); !isRefusal(err) {
		t.Fatalf("a summary at a cap of 0: %v, want it refused", err)
	}
	if n := f.inner.calls.Load(); n != 0 {
		t.Fatalf("model calls = %d, want 0", n)
	}
}

// The bot's monthly cap binds everyone; an operator's lift opens it
// until the month ends.
func TestBotCapAndLift(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.BotMonthlyTokens = ptr(int64(50))
	ctx := context.Background()
	for _, u := range []string{"telegram:1", "telegram:2"} {
		if err := f.call(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	r, ok := kairos.AsSpendRefusal(f.call(ctx, "telegram:3"))
	if !ok || !strings.Contains(r.Message, "The bot has reached its monthly token limit of 50 tokens for everyone") {
		t.Fatalf("bot cap: %+v", r)
	}
	if _, err := f.guard.Lift(ctx, usage.BotKey, "telegram:1001"); err != nil {
		t.Fatal(err)
	}
	if err := f.call(ctx, "telegram:3"); err != nil {
		t.Fatalf("after the lift: %v", err)
	}
}

// The cap check at 10,000 users (the issue asks for under 0.2 ms per
// turn): every user capped, a month of rows in the database, totals read
// once per user and then kept (b.N turns cycle through the users).
func BenchmarkAdmit10kUsers(b *testing.B) {
	f := newFixture(b)
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(1_000_000))
	f.pol.Budgets.Spend.MonthlyUSD = ptr(100.0)
	ctx := context.Background()
	const users = 10_000
	seed(b, f, users)
	for i := range users { // warm: one database read per user
		if err := f.guard.Admit(ctx, kairos.SpendContext{UserKey: fmt.Sprintf("telegram:%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := f.guard.Admit(ctx, kairos.SpendContext{UserKey: fmt.Sprintf("telegram:%d", i%users)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmitColdRead is the check when the user's totals must be read
// from the database (the first turn of a user, or after Refresh): the
// month's sum over the user's rows, with 10,000 users' rows in the table.
func BenchmarkAdmitColdRead(b *testing.B) {
	f := newFixture(b)
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(1_000_000))
	ctx := context.Background()
	const users = 10_000
	seed(b, f, users)
	st := store.NewUsageStore(f.db)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := st.SpendSince(ctx, fmt.Sprintf("telegram:%d", i%users), month, day); err != nil {
			b.Fatal(err)
		}
	}
}

// seed writes 10 calls per user spread over the month.
func seed(b *testing.B, f *fixture, users int) {
	b.Helper()
	ctx := context.Background()
	sess := store.NewSessionStore(f.db)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range users {
		for j := range 10 {
			err := sess.RecordUsage(ctx, &kairos.UsageRecord{SessionID: "s", UserKey: fmt.Sprintf("telegram:%d", i), Model: "m",
				PromptTokens: 100, CompletionTokens: 20, CostUSD: 0.001, Priced: true, CreatedAt: start.Add(time.Duration(j*2+i%24) * 24 * time.Hour / 10)})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Days the maintenance job rolled up (token_usage_daily) are read beside
// the detail rows: the report and the sums do not change by the roll-up.
func TestRolledUpDaysAreRead(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.pol.Models = map[string]kairos.ModelSpec{"m": {Price: &kairos.ModelPrice{Input: 1000, Output: 2000}}}
	for _, at := range []time.Time{
		time.Date(2026, 10, 3, 9, 0, 0, 0, time.UTC), time.Date(2026, 10, 3, 21, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
	} {
		f.set(at)
		if err := f.call(ctx, "telegram:7"); err != nil {
			t.Fatal(err)
		}
	}
	st := store.NewUsageStore(f.db)
	read := func() ([]kairos.UsageDay, kairos.SpendAmount) {
		days, err := usage.Days(ctx, st, nil, "telegram:7", "2026-10-01", f.clock())
		if err != nil {
			t.Fatal(err)
		}
		all, _, err := st.SpendSince(ctx, "telegram:7", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		return days, all
	}
	beforeDays, beforeSum := read()
	n, err := store.NewMaintenance(f.db).PruneFinished(ctx, kairos.PruneCutoffs{TokenUsage: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil || n.TokenUsage != 2 {
		t.Fatalf("roll-up: %+v, %v", n, err)
	}
	afterDays, afterSum := read()
	if fmt.Sprint(beforeDays) != fmt.Sprint(afterDays) || beforeSum != afterSum {
		t.Fatalf("before the roll-up %v %+v, after %v %+v", beforeDays, beforeSum, afterDays, afterSum)
	}
	if len(afterDays) != 2 || afterDays[0].Day != "2026-10-03" || afterDays[0].Calls != 2 || afterSum.Tokens != 90 {
		t.Fatalf("days = %+v, sum = %+v", afterDays, afterSum)
	}
}

// Caps taken away and given back by reloads start from the right totals:
// calls made while the user had no cap still count.
func TestCapsBackAfterAReloadCountCallsMadeWithout(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
	if err := f.call(ctx, "telegram:7"); err != nil { // 30
		t.Fatal(err)
	}
	f.pol.Budgets.Spend.DailyTokens = nil
	for range 3 { // 120
		if err := f.call(ctx, "telegram:7"); err != nil {
			t.Fatal(err)
		}
	}
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
	if _, ok := kairos.AsSpendRefusal(f.call(ctx, "telegram:7")); !ok {
		t.Fatal("a call at 120 of 100 tokens was made")
	}
}

// A scheduled task that would go past a cap is skipped: its last call's
// cost is what the next is judged by. The user's own turns still run.
func TestTaskThatWouldExceedIsSkipped(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
	ctx := context.Background()
	task := func() error {
		_, err := f.model.Chat(kairos.WithSpend(ctx, kairos.SpendContext{UserKey: "telegram:7", Kind: kairos.SpendTask}), kairos.ChatRequest{Model: "m"}, nil)
		return err
	}
	if err := task(); err != nil { // 30
		t.Fatal(err)
	}
	if err := f.call(ctx, "telegram:7"); err != nil { // 60
		t.Fatal(err)
	}
	if err := f.call(ctx, "telegram:7"); err != nil { // 90: a 30-token task would end at 120
		t.Fatal(err)
	}
	r, ok := kairos.AsSpendRefusal(task())
	if !ok || !strings.Contains(r.Message, "Skipped this scheduled task: it would go past your daily token limit of 100 tokens: its last run used 30 tokens and 10 tokens is left") {
		t.Fatalf("task at 90 of 100: %+v", r)
	}
	if err := f.call(ctx, "telegram:7"); err != nil {
		t.Fatalf("the user's own turn at 90 of 100: %v", err)
	}
}

// Begin reads the policy once per call: the caps that decide whether to
// wait for the user's call in flight are the ones the call is admitted
// under (a reload in between cannot split them).
func TestBeginReadsThePolicyOnce(t *testing.T) {
	f := newFixture(t)
	f.pol.Budgets.Spend.DailyTokens = ptr(int64(100))
	var reads atomic.Int64
	g := usage.New(usage.Config{Store: store.NewUsageStore(f.db), Recorder: store.NewSessionStore(f.db),
		Policy: func() *kairos.Policy { reads.Add(1); return f.pol }, Now: f.clock})
	release, err := g.Begin(context.Background(), kairos.SpendContext{UserKey: "tg:1", Kind: kairos.SpendChat}, kairos.UsageRecord{Estimated: true})
	if err != nil {
		t.Fatal(err)
	}
	release(context.Background(), nil)
	if n := reads.Load(); n != 1 {
		t.Fatalf("policy read %d times for one call, want 1", n)
	}
}
