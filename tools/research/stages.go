package research

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Answers of the roles are bounded: a reply longer than this is a model
// that rambles, not a better answer.
var maxAnswerTokens = map[string]int{StagePlanner: 600, StageResearcher: 1500, StageVerifier: 400, StageModel: 500}

// minAnswerTokens is the least room left for an answer worth asking for.
const minAnswerTokens = 64

// ask sends one role's request and returns the text of its answer. The
// stage's token budget is checked first (overBudget when the prompt and
// a minimal answer do not fit) and its spend counted after.
func (r *run) ask(ctx context.Context, stage, system string, input any) (string, error) {
	user, err := json.Marshal(input)
	if err != nil {
		return "", fmt.Errorf("research %s input: %w", stage, err)
	}
	prompt := r.count(system) + r.count(string(user)) + 12
	left := r.st.Spend.tokensLeft(r.budget, stage)
	room := min(left-prompt, maxAnswerTokens[stage])
	if room < minAnswerTokens {
		return "", &overBudget{"the " + stage + "'s tokens"}
	}
	model := r.model
	if stage == StageModel && r.rp.Model != "" {
		model = r.rp.Model
	}
	req := kairos.ChatRequest{Model: model, MaxTokens: room, Messages: []kairos.ChatMessage{
		{Role: "system", Content: system}, {Role: "user", Content: string(user)}}}
	resp, err := r.e.cfg.Model.Chat(ctx, req, nil)
	r.st.Spend.Calls++
	if err != nil {
		return "", err
	}
	used := resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	if used == 0 {
		used = prompt + r.count(resp.Message.Content)
	}
	r.st.Spend.addTokens(stage, used)
	if spec, _ := r.pol.Model(model); spec.Price != nil {
		usd, _ := kairos.UsageCost(spec.Price, &kairos.UsageRecord{PromptTokens: resp.Usage.PromptTokens,
			CompletionTokens: resp.Usage.CompletionTokens, CachedTokens: resp.Usage.CachedTokens})
		r.st.Spend.CostUSD += usd
	}
	if r.st.Spend.tokensLeft(r.budget, stage) < 0 {
		r.st.Spend.Overruns++
		return resp.Message.Content, &overBudget{"the " + stage + "'s tokens (the server ignored max_tokens)"}
	}
	return resp.Message.Content, nil
}

// plan asks the Planner to split the question; without an answer the
// question is one part, searched by its own words.
func (r *run) plan(ctx context.Context) {
	r.st.Planned = true
	text, err := r.ask(ctx, StagePlanner, plannerPrompt, map[string]any{"question": r.req.Question})
	if r.halt(err) {
		return
	}
	needs := parsePlan(text)
	if len(needs) == 0 {
		if err != nil {
			r.note("the Planner failed: " + kairos.ErrorMessage(err))
		}
		needs = []need{{Text: r.req.Question}}
	}
	r.st.Needs = needs
	r.st.Covered = make([][]int, len(needs))
}

// replan lets the Planner write new queries for the open parts from the
// checked quotes (never a page), before a tier other than the first.
func (r *run) replan(ctx context.Context, tier string) {
	if r.st.Tier == 0 || len(r.st.Claims) == 0 || r.open() == 0 || slices.Contains(r.st.Replanned, tier) {
		return
	}
	r.st.Replanned = append(r.st.Replanned, tier)
	var known []map[string]string
	for _, c := range r.st.Claims {
		known = append(known, map[string]string{"quote": c.Quote, "source": c.Evidence})
	}
	text, err := r.ask(ctx, StagePlanner, replanPrompt, map[string]any{"question": r.req.Question, "needs": r.needList(false), "quotes": known})
	if err != nil {
		if halted(err) != "" {
			r.note("no new queries: the planner's budget is spent")
		}
		return
	}
	for i, qs := range parseQueries(text, len(r.st.Needs)) {
		if !r.done(i) && len(qs) > 0 {
			// The new queries first; the old ones stay, in case the new
			// ones lead astray.
			var merged []string
			for _, q := range append(qs, r.st.Needs[i].Queries...) {
				if !slices.ContainsFunc(merged, func(m string) bool { return normQuery(m) == normQuery(q) }) {
					merged = append(merged, q)
				}
			}
			r.st.Needs[i].Queries = clipList(merged, 4, 200)
		}
	}
}

// needList is the parts of the question as the roles see them: the open
// ones, or all with whether each is covered.
func (r *run) needList(openOnly bool) []map[string]any {
	var out []map[string]any
	for i, n := range r.st.Needs {
		if openOnly && r.done(i) {
			continue
		}
		m := map[string]any{"index": i, "need": n.Text}
		if openOnly && len(n.Queries) > 0 {
			m["queries"] = n.Queries
		}
		if !openOnly {
			m["covered"] = r.done(i)
		}
		out = append(out, m)
	}
	return out
}

// verify asks the Verifier which parts the checked claims cover. A claim
// it names must exist. Without a verdict (a failed call, an answer that
// is not one) nothing new is covered: research goes on, or abstains.
func (r *run) verify(ctx context.Context) {
	var claims []map[string]any
	for i, c := range r.st.Claims {
		e := r.led.Get(c.Evidence)
		m := map[string]any{"id": i, "need": c.Need, "text": c.Text, "quote": c.Quote, "source": c.Evidence, "tier": e.Tier}
		if !e.PublishedAt.IsZero() {
			m["date"] = e.PublishedAt.Format("2006-01-02")
		}
		claims = append(claims, m)
	}
	text, err := r.ask(ctx, StageVerifier, verifierPrompt, map[string]any{"question": r.req.Question, "needs": r.needList(false), "claims": claims})
	if err != nil {
		if !r.halt(err) && ctx.Err() == nil {
			r.note("the Verifier failed: " + kairos.ErrorMessage(err))
		}
		return
	}
	r.st.Verified = len(r.st.Claims)
	verdict, ok := parseVerdict(text, len(r.st.Needs), len(r.st.Claims))
	if !ok {
		r.note("the Verifier's answer held no verdict")
		return
	}
	for i := range r.st.Needs {
		for _, k := range verdict[i] {
			if !slices.Contains(r.st.Covered[i], k) {
				r.st.Covered[i] = append(r.st.Covered[i], k)
			}
		}
	}
}

// singlePass is the benchmark's ablation without the Verifier: the
// Researcher reads a tier once and its claims are taken as they come,
// unchecked (no ledger check, no coverage verdict, no retry).
func (r *run) singlePass(ctx context.Context, docs []*kairos.Evidence) {
	rd, err := r.read(ctx, docs)
	if r.halt(err) {
		return
	}
	for _, c := range rd.Claims {
		if c.Need < 0 || c.Need >= len(r.st.Needs) {
			c.Need = 0
		}
		r.st.Claims = append(r.st.Claims, c)
		r.st.Covered[c.Need] = append(r.st.Covered[c.Need], len(r.st.Claims)-1)
	}
}

// suggestBooks asks the Planner for long-form material for the open
// parts: suggestions only, free first; a paid one needs the user's yes
// and nothing is bought.
func (r *run) suggestBooks(ctx context.Context) {
	if r.open() == 0 {
		return
	}
	text, err := r.ask(ctx, StagePlanner, bookPrompt, map[string]any{"question": r.req.Question, "open": r.needList(true)})
	if r.halt(err) || err != nil {
		return
	}
	for _, b := range parseBooks(text, len(r.st.Needs)) {
		if !r.done(b.Need) {
			r.st.Books = append(r.st.Books, b)
		}
	}
	if len(r.st.Books) > 0 && !slices.Contains(r.st.Used, kairos.TierBook) {
		r.st.Used = append(r.st.Used, kairos.TierBook)
	}
}

// requests takes the Researcher's asks for more reading: searches of the
// same tier, and fetches of URLs a search returned or the user wrote.
// Everything else it asked for is refused and kept in the trace.
func (r *run) requests(tier string, rd reading) {
	r.st.Refused = append(r.st.Refused, rd.Refused...)
	r.st.Pending = nil
	for _, q := range rd.Search {
		if slices.Contains(r.st.Asked, tier+"\x00"+normQuery(q)) {
			r.st.Refused = append(r.st.Refused, fmt.Sprintf("repeated search %q", kairos.Clip(q, 80)))
			continue
		}
		r.st.Pending = append(r.st.Pending, q)
	}
	r.st.PendingFetch = nil
	for _, u := range rd.Fetch {
		why := r.fetchRefusal(u)
		if why == "" && tier != kairos.TierWeb {
			why = "pages are read only in the web tier"
		}
		if why != "" {
			r.st.Refused = append(r.st.Refused, fmt.Sprintf("fetch %s: %s", kairos.Clip(u, 120), why))
			continue
		}
		r.st.PendingFetch = append(r.st.PendingFetch, u)
	}
}

func normQuery(q string) string { return strings.ToLower(strings.Join(strings.Fields(q), " ")) }
