package kairos

import (
	"context"
	"errors"
	"time"
)

// What a model call was for (UsageRecord.Kind). Every kind counts against
// the user it was made for and is refused at a cap (the coding call and
// the running summary inside a turn count as the turn's kind); SpendTask
// is background work (a scheduled task), held to the policy's
// budgets.spend.background_share of each cap; SpendSummary is the bot's
// own housekeeping for the user (session summaries and roll-ups): a
// refused session summary is kept as an excerpt, a refused roll-up waits
// for the cap to reset.
const (
	SpendChat          = "chat"
	SpendTask          = "task"
	SpendSummary       = "summary"
	SpendTranscription = "transcription"
)

// SpendContext says whom a model call is for. The agent sets it for the
// turn's calls; a scheduled task presets Kind; summaries set their own.
type SpendContext struct {
	UserKey   string // "telegram:42"; empty: nobody's (not capped)
	ThreadKey string
	SessionID string
	Kind      string // SpendChat when empty
}

type spendKey struct{}

// WithSpend returns ctx carrying sc for the model calls made under it.
func WithSpend(ctx context.Context, sc SpendContext) context.Context {
	return context.WithValue(ctx, spendKey{}, sc)
}

// SpendOf returns the SpendContext of ctx (false when none was set).
func SpendOf(ctx context.Context) (SpendContext, bool) {
	sc, ok := ctx.Value(spendKey{}).(SpendContext)
	return sc, ok
}

// SpendRefusal is the error of a model call that a spending cap refused:
// Message is the one sentence the user sees (what was reached and when it
// resets). No model request was made.
type SpendRefusal struct {
	Message string
}

func (e *SpendRefusal) Error() string { return "spending cap: " + e.Message }

// AsSpendRefusal finds a SpendRefusal in err's chain.
func AsSpendRefusal(err error) (*SpendRefusal, bool) {
	var r *SpendRefusal
	ok := errors.As(err, &r)
	return r, ok
}

// SpendGate decides whether a model call may be made, and holds its place
// while it is made.
type SpendGate interface {
	// Begin admits one model call for sc that is expected to use about
	// est (its Model, tokens, Audio, Images; Estimated when the amounts
	// are a guess, false when they are what the call will use: a call
	// known to go past a cap is then refused). The call's share of the
	// caps is held until done is called with what it did use (nil: no
	// request was made); done records it and must be called exactly once.
	// A refused call returns a *SpendRefusal; other errors are failures of
	// the check itself or ctx's.
	Begin(ctx context.Context, sc SpendContext, est UsageRecord) (done func(ctx context.Context, used *UsageRecord), err error)
	// Admit checks, holding nothing, whether a call for sc would be
	// admitted now: nil, or a *SpendRefusal (a cap reached, or 0).
	Admit(ctx context.Context, sc SpendContext) error
	// Capped reports whether any cap (the user's or the bot's) applies to
	// userKey's calls now.
	Capped(userKey string) bool
}

// UsageTotals are summed model calls.
type UsageTotals struct {
	Calls            int64   `json:"calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	AudioSeconds     float64 `json:"audio_seconds"`
	Images           int64   `json:"images"`
	CostUSD          float64 `json:"cost_usd"`
	// UnpricedCalls are calls of models without a price: their tokens
	// count, their cost is unknown (not in CostUSD).
	UnpricedCalls int64 `json:"unpriced_calls"`
	// EstimatedCalls are calls whose provider reported no usage: their
	// tokens are estimates from the texts.
	EstimatedCalls int64 `json:"estimated_calls"`
}

// Tokens are the prompt and completion tokens (what token caps count).
func (t UsageTotals) Tokens() int64 { return t.PromptTokens + t.CompletionTokens }

// Add adds o to t.
func (t *UsageTotals) Add(o UsageTotals) {
	t.Calls += o.Calls
	t.PromptTokens += o.PromptTokens
	t.CachedTokens += o.CachedTokens
	t.CompletionTokens += o.CompletionTokens
	t.AudioSeconds += o.AudioSeconds
	t.Images += o.Images
	t.CostUSD += o.CostUSD
	t.UnpricedCalls += o.UnpricedCalls
	t.EstimatedCalls += o.EstimatedCalls
}

// UsageDay is the usage of one user and model on one day of the user's
// own zone (Day is YYYY-MM-DD).
type UsageDay struct {
	UserKey string `json:"user_key"`
	Model   string `json:"model"`
	Day     string `json:"day"`
	UsageTotals
}

// UsageBucket is usage summed over a stretch of time no longer than a
// quarter of an hour, starting at Start (every zone's offset is a whole
// number of quarter hours, so a bucket never straddles a local midnight).
type UsageBucket struct {
	UserKey string
	Model   string
	Start   time.Time
	UsageTotals
}

// SpendAmount is what caps count: tokens and cost.
type SpendAmount struct {
	Tokens  int64
	CostUSD float64
}

// UsageStore reads and keeps the cost accounting.
type UsageStore interface {
	// SpendSince sums userKey's calls ("" for every user) from since on,
	// and separately from split on (split >= since): a month and its
	// current day in one read.
	SpendSince(ctx context.Context, userKey string, since, split time.Time) (all, fromSplit SpendAmount, err error)
	// UsageBuckets returns userKey's usage ("" for everyone) in [from, to)
	// by user, model and quarter hour, ordered by user, model and time.
	UsageBuckets(ctx context.Context, userKey string, from, to time.Time) ([]UsageBucket, error)
	// MarkSpendNotice records that notice key went out to userKey; false
	// when it already had (a notice is given once, by one replica).
	MarkSpendNotice(ctx context.Context, userKey, key string, at time.Time) (bool, error)
	// LiftSpendCap lifts userKey's caps of period (a day "2026-11-25" or
	// a month "2026-11") until that period ends; by is the operator.
	LiftSpendCap(ctx context.Context, userKey, period, by string, at time.Time) error
	// SpendLifts returns which of periods are lifted for userKey.
	SpendLifts(ctx context.Context, userKey string, periods ...string) (map[string]bool, error)
}

// UsageCost prices one call at p: prompt tokens not served from the cache
// at Input, cached ones at CachedInput (Input when that is 0), completion
// tokens at Output (all per million tokens), audio per minute and images
// each. With no price it returns 0, false: the call counts in tokens only.
func UsageCost(p *ModelPrice, rec *UsageRecord) (float64, bool) {
	if p == nil {
		return 0, false
	}
	cached := min(max(rec.CachedTokens, 0), rec.PromptTokens)
	cachedRate := p.CachedInput
	if cachedRate == 0 {
		cachedRate = p.Input
	}
	usd := (float64(rec.PromptTokens-cached)*p.Input + float64(cached)*cachedRate + float64(rec.CompletionTokens)*p.Output) / 1e6
	usd += rec.Audio.Minutes() * p.AudioPerMinute
	usd += float64(rec.Images) * p.PerImage
	return usd, true
}
