package research

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Per retrieval, how much is taken.
const (
	memoryHits       = 5
	offlineHits      = 4
	kiwixHits        = 3
	webResults       = 6
	webFetches       = 2 // pages read per search, best results first
	maxEvidenceBytes = 64 << 10
)

// retrieve gathers a round's new sources from a tier. It returns what it
// found even when a budget stops it (with the stop as the error).
func (r *run) retrieve(ctx context.Context, tier string) ([]*kairos.Evidence, error) {
	if len(r.st.Retry) > 0 {
		var again []*kairos.Evidence
		for _, ref := range r.st.Retry {
			if e := r.led.Get(ref); e != nil {
				again = append(again, e)
			}
		}
		r.st.Retry = nil
		return again, nil
	}
	switch tier {
	case kairos.TierMemory:
		return r.fromQueries(ctx, tier, r.memorySearch)
	case kairos.TierOffline:
		if d := r.rp.Offline.Dir; d != "" && r.e.cfg.Index != nil {
			if err := r.e.index.refresh(ctx, d, r.rp.Offline.MaxFileBytes); err != nil {
				r.note("the offline folder could not be indexed: " + kairos.ErrorMessage(err))
			}
		}
		return r.fromQueries(ctx, tier, r.offlineSearch)
	case kairos.TierWeb:
		fetch := r.st.PendingFetch
		if r.st.TierRound == 0 {
			fetch = r.req.UserURLs // the pages the user pointed at come first
		}
		docs, err := r.fetchPages(ctx, fetch)
		if err != nil {
			return docs, err
		}
		more, err := r.fromQueries(ctx, tier, r.webSearch)
		return append(docs, more...), err
	case kairos.TierModel:
		return r.askModel(ctx)
	}
	return nil, nil
}

// queries are a round's queries: in a tier's first round the open parts'
// queries (their own words when the Planner gave none), later the
// searches the Researcher asked for.
func (r *run) queries() []string {
	if r.st.TierRound > 0 {
		return r.st.Pending
	}
	var out []string
	for i, n := range r.st.Needs {
		if r.done(i) {
			continue
		}
		qs := n.Queries
		if len(qs) == 0 {
			qs = []string{n.Text}
		}
		for _, q := range qs {
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

func (r *run) asked(kind, q string) bool {
	return slices.Contains(r.st.Asked, kind+"\x00"+normQuery(q))
}

// useTool counts one retrieval against the budget.
func (r *run) useTool(kind, q string) error {
	if r.st.Spend.ToolCalls >= r.budget.ToolCalls {
		return &overBudget{"retrievals"}
	}
	r.st.Spend.ToolCalls++
	r.st.Asked = append(r.st.Asked, kind+"\x00"+normQuery(q))
	r.tried()
	return nil
}

// tried marks the current tier as searched.
func (r *run) tried() {
	if tier := r.st.TierOrder[r.st.Tier]; !slices.Contains(r.st.Tried, tier) {
		r.st.Tried = append(r.st.Tried, tier)
	}
}

// fromQueries runs a tier's search for each query of the round (a query
// asked before is refused) and keeps what is new.
func (r *run) fromQueries(ctx context.Context, tier string, search func(context.Context, string) ([]*kairos.Evidence, error)) ([]*kairos.Evidence, error) {
	var out []*kairos.Evidence
	for _, q := range r.queries() {
		if r.asked(tier, q) {
			r.st.Refused = append(r.st.Refused, fmt.Sprintf("repeated %s query %q", tier, kairos.Clip(q, 80)))
			continue
		}
		if err := r.useTool(tier, q); err != nil {
			return out, err
		}
		found, err := search(ctx, q)
		for _, e := range found {
			if kept, kerr := r.keep(ctx, e); kerr != nil {
				return out, kerr
			} else if kept {
				out = append(out, e)
			}
		}
		if err != nil {
			if halted(err) != "" || ctx.Err() != nil {
				return out, err
			}
			r.note(fmt.Sprintf("%s search failed: %s", tier, kairos.ErrorMessage(err)))
		}
	}
	return out, nil
}

// keep puts a new source in the ledger and the store; a source already
// read (same memory, path or URL) is not kept again.
func (r *run) keep(ctx context.Context, e *kairos.Evidence) (bool, error) {
	for _, old := range r.led.All() {
		if old.Tier == e.Tier && old.URL == e.URL && old.Path == e.Path && (e.URL != "" || e.Path != "") {
			return false, nil
		}
	}
	e.TraceID = r.tr.ID
	e.RetrievedAt = r.e.cfg.Now()
	e.Text = kairos.Clip(e.Text, maxEvidenceBytes)
	r.led.Add(e)
	if err := r.e.cfg.Store.AddEvidence(ctx, e); err != nil {
		if kairos.ErrorCode(err) == kairos.ECONFLICT {
			return false, kairos.Errorf(kairos.ECONFLICT, "This question is being researched already; ask again when that is done.")
		}
		return false, err
	}
	if e.Tainted && !r.tr.Tainted {
		r.tr.Tainted = true
	}
	return true, nil
}

// memorySearch recalls the user's memories and summaries.
func (r *run) memorySearch(ctx context.Context, q string) ([]*kairos.Evidence, error) {
	ms, err := r.e.cfg.Memories.RecallMemories(ctx, kairos.MemoryFilter{UserKey: r.req.UserKey, Query: q, Limit: memoryHits})
	if err != nil {
		return nil, err
	}
	out := make([]*kairos.Evidence, len(ms))
	for i, m := range ms {
		title := m.Type
		if m.PeriodKey != "" {
			title += " " + m.PeriodKey
		}
		out[i] = &kairos.Evidence{Tier: kairos.TierMemory, Title: title, Path: "memory:" + m.ID, Text: m.Content,
			PublishedAt: m.UpdatedAt, Tainted: m.Tainted}
	}
	return out, nil
}

// offlineSearch searches the folder's index and the ZIM archives.
func (r *run) offlineSearch(ctx context.Context, q string) ([]*kairos.Evidence, error) {
	var out []*kairos.Evidence
	if r.e.cfg.Index != nil && r.rp.Offline.Dir != "" {
		docs, err := r.e.cfg.Index.SearchDocs(ctx, q, offlineHits)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			out = append(out, &kairos.Evidence{Tier: kairos.TierOffline, Title: d.Title, Path: d.Path, Text: d.Text,
				PublishedAt: d.ModTime, Tainted: true})
		}
	}
	if r.rp.Offline.KiwixURL != "" {
		zim, err := r.kiwixSearch(ctx, q)
		out = append(out, zim...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// askModel is tier 4: the external model, given only the question, the
// open parts and the quotes found outside the user's memory, with
// secrets and personal details removed. Its answer is one more source
// (the lowest trusted), that claims must quote like any other.
func (r *run) askModel(ctx context.Context) ([]*kairos.Evidence, error) {
	if r.asked(kairos.TierModel, "") || r.open() == 0 {
		return nil, nil
	}
	r.st.Asked = append(r.st.Asked, kairos.TierModel+"\x00")
	r.tried()
	var open []string
	for _, n := range r.needList(true) {
		open = append(open, r.redact(n["need"].(string)))
	}
	var known []string
	for _, c := range r.st.Claims {
		if e := r.led.Get(c.Evidence); e != nil && e.Tier != kairos.TierMemory {
			known = append(known, r.redact(c.Quote))
		}
	}
	in := map[string]any{"question": r.redact(r.req.Question), "parts": open}
	if len(known) > 0 {
		in["known"] = known
	}
	text, err := r.ask(ctx, StageModel, modelPrompt, in)
	if err != nil {
		return nil, err
	}
	text = strings.TrimSpace(thinkRe.ReplaceAllString(text, ""))
	if text == "" || len(text) < 80 && strings.Contains(strings.ToLower(text), "know") {
		return nil, nil
	}
	e := &kairos.Evidence{Tier: kairos.TierModel, Title: "the external model " + r.modelName(), Path: "model:" + r.modelName(), Text: text, Tainted: true}
	if _, err := r.keep(ctx, e); err != nil {
		return nil, err
	}
	return []*kairos.Evidence{e}, nil
}

func (r *run) modelName() string {
	if r.rp.Model != "" {
		return r.rp.Model
	}
	return r.model
}
