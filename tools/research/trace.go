package research

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kairos-agent/kairos"
)

// state is a trace's own record, rewritten after every step: enough to
// resume after a restart without repeating a search or a fetch.
type state struct {
	Needs     []need   `json:"needs,omitempty"`
	Planned   bool     `json:"planned,omitempty"`
	TierOrder []string `json:"tier_order"`
	Tier      int      `json:"tier"`        // index into TierOrder
	TierRound int      `json:"tier_rounds"` // rounds spent in the current tier
	// Asked holds every retrieval made ("memory\x00query",
	// "fetch\x00url", …): a repeat is refused.
	Asked []string `json:"asked,omitempty"`
	// Pending are the Researcher's requests for the current tier.
	Pending      []string `json:"pending,omitempty"`
	PendingFetch []string `json:"pending_fetch,omitempty"`
	// Fetchable are the URLs a search returned or the user wrote.
	Fetchable []string `json:"fetchable,omitempty"`
	Claims    []Claim  `json:"claims,omitempty"`   // claims that passed the ledger's check
	Verified  int      `json:"verified,omitempty"` // how many of them the Verifier has seen
	Covered   [][]int  `json:"covered,omitempty"`  // per need, the claims the Verifier accepts
	Dropped   []string `json:"dropped,omitempty"`  // claims refused, with why
	Refused   []string `json:"refused,omitempty"`  // requests refused, with why
	Used      []string `json:"tiers_used,omitempty"`
	Tried     []string `json:"tiers_tried,omitempty"` // tiers searched, whether or not they gave anything
	Replanned []string `json:"replanned,omitempty"`
	Books     []Book   `json:"books,omitempty"`
	Outputs   []string `json:"outputs,omitempty"` // digests of the Researcher's answers: the loop breaker
	// Retry holds the sources the Researcher reads once more, told why
	// its claims about them were dropped (Rejected); once per tier.
	Retry    []string   `json:"retry,omitempty"`
	Rejected []rejected `json:"rejected,omitempty"`
	Retried  []string   `json:"retried,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
	Spend    Spend      `json:"spend"`
	Stopped  string     `json:"stopped,omitempty"`
}

func (s *state) marshal() json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// run is one trace being worked on.
type run struct {
	e       *Engine
	req     Request
	pol     *kairos.Policy
	rp      kairos.ResearchPolicy
	budget  kairos.ResearchBudget
	tr      *kairos.ResearchTrace
	st      *state
	led     *Ledger
	started time.Time
	seconds float64 // spent before this run started (earlier runs of the trace)
	model   string
}

// resume loads a running trace's state and ledger.
func (r *run) resume(ctx context.Context, tr *kairos.ResearchTrace) error {
	r.tr, r.st = tr, &state{}
	if err := json.Unmarshal(tr.State, r.st); err != nil {
		return fmt.Errorf("resume research trace %s: %w", tr.ID, err)
	}
	es, err := r.e.cfg.Store.Evidence(ctx, tr.ID)
	if err != nil {
		return err
	}
	r.led = NewLedger(es...)
	r.seconds = r.st.Spend.Seconds
	r.note("resumed after an interruption")
	return nil
}

// count counts a text's tokens for the roles' model.
func (r *run) count(text string) int { return r.e.cfg.CountTokens(r.model, text) }

func (r *run) note(s string) { r.st.Notes = append(r.st.Notes, s) }

// save writes the trace's state (its status stays running until finish).
func (r *run) save(ctx context.Context) {
	r.st.Spend.Seconds = r.seconds + time.Since(r.started).Seconds()
	r.tr.State = r.st.marshal()
	if err := r.e.cfg.Store.SaveTrace(context.WithoutCancel(ctx), r.tr); err != nil {
		r.e.log.Warn("save research trace", "trace", r.tr.ID, "err", err)
	}
}

// halt stops the research for err when it is a stop (budget, wall time,
// spending cap) and reports whether it was.
func (r *run) halt(err error) bool {
	if why := halted(err); why != "" {
		if r.st.Stopped == "" {
			r.st.Stopped = why
		}
		return true
	}
	return false
}

// loop goes through the tiers, lowest first, while parts stay open.
func (r *run) loop(ctx context.Context) {
	if !r.st.Planned {
		r.plan(ctx)
		r.save(ctx)
	}
	for r.st.Tier < len(r.st.TierOrder) && r.st.Stopped == "" && ctx.Err() == nil {
		if r.open() == 0 {
			break
		}
		tier := r.st.TierOrder[r.st.Tier]
		if tier == kairos.TierBook {
			r.suggestBooks(ctx)
			r.advance()
			continue
		}
		if r.st.TierRound == 0 {
			r.replan(ctx, tier)
		}
		more := r.round(ctx, tier)
		if !more || r.st.TierRound >= maxTierRounds {
			r.advance()
		}
		r.save(ctx)
	}
	if ctx.Err() != nil {
		r.halt(ctx.Err())
	}
}

func (r *run) advance() {
	r.st.Tier++
	r.st.TierRound = 0
	r.st.Pending, r.st.PendingFetch = nil, nil
}

// open counts the parts of the question not yet done.
func (r *run) open() int {
	n := 0
	for i := range r.st.Needs {
		if !r.done(i) {
			n++
		}
	}
	return n
}

// covered: the Verifier accepted claims for the part.
func (r *run) covered(i int) bool { return i < len(r.st.Covered) && len(r.st.Covered[i]) > 0 }

// done: the part is covered, and not only by stale references: a part
// that only sources older than research.stale_after answer (a memory is
// never stale: it is the user's own record) stays open for a fresher
// tier, and keeps its claims if none answers.
func (r *run) done(i int) bool {
	if !r.covered(i) {
		return false
	}
	for _, k := range r.st.Covered[i] {
		e := r.led.Get(r.st.Claims[k].Evidence)
		if e == nil || e.Tier == kairos.TierMemory || e.PublishedAt.IsZero() || r.e.cfg.Now().Sub(e.PublishedAt) <= r.rp.StaleAfter.Approx() {
			return true
		}
	}
	return false
}

// round is one reading round of a tier: retrieve, read, check, verify. It
// reports whether the tier has more to read (the Researcher asked for it).
func (r *run) round(ctx context.Context, tier string) bool {
	if r.st.Spend.Rounds >= r.budget.Rounds {
		r.halt(&overBudget{"rounds"}) // nothing retrieved that no round could read
		return false
	}
	docs, err := r.retrieve(ctx, tier)
	if r.halt(err) || len(docs) == 0 {
		return false
	}
	if !slices.Contains(r.st.Used, tier) {
		r.st.Used = append(r.st.Used, tier)
	}
	r.st.TierRound++
	if r.e.cfg.Variant == VariantNoVerifier {
		r.singlePass(ctx, docs)
		return false
	}
	rd, err := r.read(ctx, docs)
	if err != nil {
		r.halt(err)
		return false
	}
	if r.repeated(tier, rd) {
		r.note("the Researcher repeated itself in " + tier + "; moving on")
		return false
	}
	r.st.Rejected = nil
	_, rejects := r.check(rd.Claims)
	r.requests(tier, rd)
	if len(r.st.Claims) > r.st.Verified {
		r.verify(ctx) // new claims, or ones a restart kept from the Verifier
	}
	if r.open() > 0 && len(rejects) > 0 && !slices.Contains(r.st.Retried, tier) {
		// One more reading of the same sources, told what failed.
		r.st.Retried = append(r.st.Retried, tier)
		r.st.Rejected = rejects
		for _, d := range docs {
			r.st.Retry = append(r.st.Retry, d.Ref)
		}
		return true
	}
	return r.open() > 0 && (len(r.st.Pending) > 0 || len(r.st.PendingFetch) > 0)
}

// rejected is a dropped claim as the Researcher is told of it.
type rejected struct {
	Claim string `json:"claim"`
	Cited string `json:"cited"`
	Why   string `json:"why"`
}

// repeated is the loop breaker: a Researcher answer in a tier the same as
// an earlier one there (same claims, same requests) ends the tier. An
// empty answer is no loop.
func (r *run) repeated(tier string, rd reading) bool {
	if len(rd.Claims)+len(rd.Search)+len(rd.Fetch)+len(rd.Refused) == 0 {
		return false
	}
	b, _ := json.Marshal(struct {
		Tier string
		R    reading
	}{tier, rd})
	sum := sha256.Sum256(b)
	d := hex.EncodeToString(sum[:8])
	if slices.Contains(r.st.Outputs, d) {
		return true
	}
	r.st.Outputs = append(r.st.Outputs, d)
	return false
}

// check keeps the claims the ledger backs and records why the others were
// dropped; it returns how many it kept and what it dropped.
func (r *run) check(claims []Claim) (int, []rejected) {
	kept := 0
	var rejects []rejected
	for _, c := range claims {
		if len(r.st.Needs) == 1 && c.Need < 0 {
			c.Need = 0
		}
		var err error
		if c.Need < 0 || c.Need >= len(r.st.Needs) {
			err = fmt.Errorf("names no part of the question")
		} else {
			err = r.led.Check(c, r.req.Question)
		}
		if err != nil {
			r.st.Dropped = append(r.st.Dropped, fmt.Sprintf("%q (%s): %v", kairos.Clip(c.Text, 120), kairos.Clip(c.Evidence, 20), err))
			rejects = append(rejects, rejected{Claim: kairos.Clip(c.Text, 300), Cited: kairos.Clip(c.Evidence, 20), Why: err.Error()})
			continue
		}
		if slices.ContainsFunc(r.st.Claims, func(o Claim) bool { return o.Evidence == c.Evidence && o.Quote == c.Quote && o.Need == c.Need }) {
			continue
		}
		r.st.Claims = append(r.st.Claims, c)
		kept++
	}
	return kept, rejects
}
