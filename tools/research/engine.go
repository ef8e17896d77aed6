package research

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
	"github.com/kairos-agent/kairos/internal/redact"
)

// Searcher is the web tier's search backend (the search tool's provider).
type Searcher interface {
	Search(ctx context.Context, query string, max int) ([]SearchResult, error)
}

// SearchResult is one result of a web search.
type SearchResult struct {
	Title, URL, Snippet, Date string
}

// Variants of the engine: the normal one and the benchmark's ablations.
const (
	VariantNormal     = ""
	VariantWebFirst   = "web_first"   // ablation: the web before memory and the offline references
	VariantNoVerifier = "no_verifier" // ablation: one reading per tier, its claims taken unchecked (no ledger check, no Verifier, no retry)
)

// Config wires an Engine. Store and Model are required; a tier whose part
// is missing is absent.
type Config struct {
	Store    kairos.ResearchStore
	Index    kairos.ResearchIndex // the offline folder's index
	Memories kairos.MemoryStore
	// Model is the spend-guarded model every model user gets, so research
	// counts against the user's caps.
	Model kairos.Model
	// Models are the chat models; the first one plays the roles.
	Models func() []string
	Search Searcher
	// HTTP fetches pages and ZIM articles; it must not follow redirects
	// on its own (the engine checks every hop against the allow list).
	HTTP   *http.Client
	Policy func() *kairos.Policy
	// PDFText extracts a PDF's text layer (the media package); nil: PDFs
	// of the offline folder are skipped.
	PDFText func(data []byte, limit int) (string, error)
	// Secrets are values never sent to the external model.
	Secrets []string
	// CountTokens counts a text's tokens for a model (internal/tokens);
	// nil: fit.Estimate.
	CountTokens func(model, text string) int
	Now         func() time.Time
	Logger      *slog.Logger
	// Variant selects a benchmark ablation; empty in production.
	Variant string
}

// Engine runs research questions. It is safe for concurrent use.
type Engine struct {
	cfg     Config
	log     *slog.Logger
	index   *indexer
	scrub   *redact.Redactor
	fetcher *fetcher
}

// New returns an engine for cfg.
func New(cfg Config) *Engine {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CountTokens == nil {
		cfg.CountTokens = func(_, text string) int { return fit.Estimate(text) }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 20 * time.Second}
	}
	e := &Engine{cfg: cfg, log: cfg.Logger.With("component", "research"), scrub: redact.New(cfg.Secrets)}
	e.index = &indexer{e: e}
	e.fetcher = &fetcher{client: cfg.HTTP}
	return e
}

// Request is one research question.
type Request struct {
	UserKey   string
	ThreadKey string
	Question  string
	Depth     string // quick, normal (default) or deep
	// UserURLs are addresses the user wrote themselves: the web tier may
	// read them (when the policy allows their domains) besides what a
	// search returned.
	UserURLs []string
}

// Limits of a question.
const (
	MaxQuestionRunes = 2000
	maxTierRounds    = 3 // reading rounds in one tier (the first, then what the Researcher asked for)
)

// Research answers a question with sources, or says it does not know. A
// trace of the same user and question that was cut short (a restart)
// within research.resume is resumed rather than started again. When ctx
// ends before the answer the trace stays running and ctx's error is
// returned.
func (e *Engine) Research(ctx context.Context, req Request) (*Result, error) {
	p := e.cfg.Policy()
	if !p.Research.Enabled {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "Research is switched off in the policy.")
	}
	req.Question = strings.TrimSpace(req.Question)
	switch n := utf8.RuneCountInString(req.Question); {
	case n == 0:
		return nil, kairos.Errorf(kairos.EINVALID, "A research question is needed.")
	case n > MaxQuestionRunes:
		return nil, kairos.Errorf(kairos.EINVALID, "The question is longer than %d characters.", MaxQuestionRunes)
	}
	if req.Depth == "" {
		req.Depth = kairos.DepthNormal
	}
	if !slices.Contains([]string{kairos.DepthQuick, kairos.DepthNormal, kairos.DepthDeep}, req.Depth) {
		return nil, kairos.Errorf(kairos.EINVALID, "depth must be quick, normal or deep.")
	}
	r, err := e.open(ctx, req, p)
	if err != nil {
		return nil, err
	}
	left := r.budget.WallTime.Approx() - time.Duration(r.st.Spend.Seconds*float64(time.Second))
	rctx, cancel := context.WithTimeout(ctx, max(left, 0))
	defer cancel()
	r.loop(rctx)
	if ctx.Err() != nil {
		r.save(context.WithoutCancel(ctx))
		return nil, ctx.Err()
	}
	return r.finish(ctx), nil
}

// questionKey is what makes two questions the same: the words, lower
// case, and the depth.
func questionKey(q, depth string) string {
	sum := sha256.Sum256([]byte(depth + "\x00" + strings.ToLower(strings.Join(strings.Fields(q), " "))))
	return hex.EncodeToString(sum[:12])
}

// open resumes the user's running trace of the question, or starts one.
func (e *Engine) open(ctx context.Context, req Request, p *kairos.Policy) (*run, error) {
	r := &run{e: e, req: req, pol: p, rp: p.Research, budget: p.Research.Budgets.Budget(req.Depth), started: time.Now(), model: e.roleModel()}
	key := questionKey(req.Question, req.Depth)
	tr, err := e.cfg.Store.RunningTrace(ctx, req.UserKey, key, e.cfg.Now().Add(-p.Research.Resume.Approx()))
	switch {
	case err == nil:
		return r, r.resume(ctx, tr)
	case kairos.ErrorCode(err) != kairos.ENOTFOUND:
		return nil, err
	}
	r.st = &state{TierOrder: e.tierOrder(p.Research), Fetchable: req.UserURLs}
	r.led = NewLedger()
	r.tr = &kairos.ResearchTrace{UserKey: req.UserKey, ThreadKey: req.ThreadKey, Question: req.Question, QuestionKey: key,
		Depth: req.Depth, Status: kairos.ResearchRunning, CreatedAt: e.cfg.Now()}
	r.tr.State = r.st.marshal()
	if err := e.cfg.Store.CreateTrace(ctx, r.tr); err != nil {
		return nil, err
	}
	return r, nil
}

func (e *Engine) roleModel() string {
	if e.cfg.Models != nil {
		if ms := e.cfg.Models(); len(ms) > 0 {
			return ms[0]
		}
	}
	return ""
}

// tierOrder lists the tiers this engine can use under the policy, lowest
// first (web first for that ablation).
func (e *Engine) tierOrder(rp kairos.ResearchPolicy) []string {
	var out []string
	for _, t := range kairos.ResearchTiers {
		if rp.UsesTier(t) && e.available(t, rp) {
			out = append(out, t)
		}
	}
	if e.cfg.Variant == VariantWebFirst && slices.Contains(out, kairos.TierWeb) {
		out = append([]string{kairos.TierWeb}, slices.DeleteFunc(out, func(t string) bool { return t == kairos.TierWeb })...)
	}
	return out
}

func (e *Engine) available(tier string, rp kairos.ResearchPolicy) bool {
	switch tier {
	case kairos.TierMemory:
		return e.cfg.Memories != nil
	case kairos.TierOffline:
		return e.cfg.Index != nil && rp.Offline.Dir != "" || rp.Offline.KiwixURL != ""
	case kairos.TierWeb:
		return e.cfg.Search != nil && len(rp.Web.AllowList) > 0
	}
	return true
}

// halted turns a failure into why research stopped ("" when it may go on).
func halted(err error) string {
	var ob *overBudget
	switch {
	case errors.As(err, &ob):
		return ob.what
	case errors.Is(err, context.DeadlineExceeded):
		return "wall time"
	}
	if r, ok := kairos.AsSpendRefusal(err); ok {
		return "spending cap: " + r.Message
	}
	return ""
}
