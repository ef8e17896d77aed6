package research

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// Result is the research tool's answer (the contract's shape, plus the
// status, the open parts, what was found and the book suggestions).
type Result struct {
	Success          bool     `json:"success"`
	Answer           string   `json:"answer,omitempty"`
	Abstained        bool     `json:"abstained"`
	Confidence       string   `json:"confidence,omitempty"`
	ConfidenceReason string   `json:"confidence_reason,omitempty"`
	ConfidenceScore  float64  `json:"confidence_score"`
	Sources          []Source `json:"sources,omitempty"`
	TiersUsed        []string `json:"tiers_used,omitempty"`
	// TiersTried are the tiers searched, whether or not they gave a
	// source (a search that found nothing still left the tier).
	TiersTried []string `json:"tiers_tried,omitempty"`
	Spend      *Spend   `json:"spend,omitempty"`
	TraceID    string   `json:"trace_id,omitempty"`
	Status     string   `json:"status,omitempty"`
	// Unknown are the parts of the question nothing checked answers.
	Unknown []string `json:"unknown,omitempty"`
	// Found lists what was read, when the answer abstains.
	Found []Source `json:"found,omitempty"`
	Books []Book   `json:"books,omitempty"`
	// Stopped says why research ended early (a budget, the wall time, a
	// spending cap).
	Stopped string `json:"stopped,omitempty"`
	// Untrusted: the answer rests on content from outside the user's own
	// untainted memories; it taints the turn that reads it.
	Untrusted bool   `json:"untrusted,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Source is one numbered source of an answer.
type Source struct {
	ID          int       `json:"id"`  // the number the answer cites: [1]
	Ref         string    `json:"ref"` // its ref in the trace's ledger
	Tier        string    `json:"tier"`
	Title       string    `json:"title"`
	URL         string    `json:"url,omitempty"`
	Path        string    `json:"path,omitempty"`
	Quote       string    `json:"quote,omitempty"`
	RetrievedAt time.Time `json:"retrieved_at"`
	PublishedAt string    `json:"published_at,omitempty"`
}

// finish composes the answer from the covered parts and records it.
func (r *run) finish(ctx context.Context) *Result {
	var parts []settled
	for i := range r.st.Needs {
		if r.covered(i) {
			var claims []Claim
			for _, k := range r.st.Covered[i] {
				claims = append(claims, r.st.Claims[k])
			}
			parts = append(parts, settle(i, claims, r.led, r.e.cfg.Now(), r.rp.StaleAfter.Approx()))
		}
	}
	conf := overall(parts, len(r.st.Needs))
	for i := range r.st.Books {
		if r.covered(r.st.Books[i].Need) {
			r.st.Books[i].Status = "not_needed"
		}
	}
	spend := r.st.Spend
	spend.Seconds = r.seconds + time.Since(r.started).Seconds()
	res := &Result{Success: true, TraceID: r.tr.ID, TiersUsed: r.st.Used, TiersTried: r.st.Tried, Spend: &spend, Books: r.st.Books, Stopped: r.st.Stopped,
		Confidence: conf.Label, ConfidenceReason: conf.Reason, ConfidenceScore: conf.Score}
	r.compose(res, parts)
	res.Untrusted = r.tr.Tainted
	switch {
	case r.st.Stopped != "":
		res.Status = kairos.ResearchOverBudget
	case len(parts) == 0:
		res.Status = kairos.ResearchAbstained
	case len(parts) < len(r.st.Needs):
		res.Status = kairos.ResearchPartial
	default:
		res.Status = kairos.ResearchAnswered
	}
	r.tr.Status = res.Status
	r.tr.Answer, _ = json.Marshal(res)
	r.save(ctx)
	return res
}

// compose writes the answer: one sentence per covered part citing its
// numbered sources, the open parts said to be unknown, and when nothing
// is covered an abstention showing what was read.
func (r *run) compose(res *Result, parts []settled) {
	num := map[string]int{}
	var lines []string
	byNeed := map[int]settled{}
	for _, p := range parts {
		byNeed[p.Need] = p
	}
	for i, n := range r.st.Needs {
		p, ok := byNeed[i]
		if !ok {
			res.Unknown = append(res.Unknown, n.Text)
			continue
		}
		var cites []string
		for _, c := range p.Claims {
			if _, seen := num[c.Evidence]; !seen {
				num[c.Evidence] = len(res.Sources) + 1
				res.Sources = append(res.Sources, r.source(num[c.Evidence], c))
			}
			cite := fmt.Sprintf("[%d]", num[c.Evidence])
			if !strings.Contains(strings.Join(cites, ""), cite) {
				cites = append(cites, cite)
			}
		}
		lines = append(lines, strings.TrimSpace(p.Claims[0].Text)+" "+strings.Join(cites, ""))
	}
	if len(parts) == 0 {
		res.Abstained = true
		lines = []string{"I don't know: nothing I could check answers this."}
		es := r.led.All()
		for i := len(es) - 1; i >= 0 && len(res.Found) < 5; i-- {
			res.Found = append(res.Found, r.source(0, Claim{Evidence: es[i].Ref}))
		}
	} else {
		for _, u := range res.Unknown {
			lines = append(lines, "Not found: "+u)
		}
	}
	if r.st.Stopped != "" {
		lines = append(lines, fmt.Sprintf("I stopped early (%s) and answered with what I had. Spent: %s.", r.st.Stopped, res.Spend.Text(r.budget)))
	}
	res.Answer = strings.Join(lines, "\n")
}

func (r *run) source(n int, c Claim) Source {
	e := r.led.Get(c.Evidence)
	if e == nil { // only an unchecked claim (the ablation without the Verifier) cites a ref not read
		return Source{ID: n, Ref: c.Evidence, Title: "(not in the ledger)", Quote: c.Quote}
	}
	s := Source{ID: n, Ref: e.Ref, Tier: e.Tier, Title: e.Title, URL: e.URL, Path: e.Path, Quote: c.Quote, RetrievedAt: e.RetrievedAt}
	if !e.PublishedAt.IsZero() {
		s.PublishedAt = e.PublishedAt.Format("2006-01-02")
	}
	return s
}
