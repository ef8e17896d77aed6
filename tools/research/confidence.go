package research

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// Confidence comes from the evidence, never from a model's opinion of
// itself: how many independent sources agree, their tiers, their age,
// and whether sources disagree.
type Confidence struct {
	Score  float64 `json:"score"` // 0..1, the estimated chance the answer is right
	Label  string  `json:"label"` // high, medium or low
	Reason string  `json:"reason"`
}

// Confidence labels.
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// tierWeight is how likely one source of a tier is right on its own.
var tierWeight = map[string]float64{
	kairos.TierMemory:  0.8,  // the user's own record (it may be out of date)
	kairos.TierOffline: 0.75, // the operator's chosen references
	kairos.TierWeb:     0.55, // an allow-listed page
	kairos.TierModel:   0.3,  // a model's word, with no source behind it
}

// Adjustments of a source's weight and of a part's score.
const (
	staleFactor      = 0.6  // older than research.stale_after
	undatedWebFactor = 0.9  // a web page that states no date
	taintedMemory    = 0.7  // a memory written after untrusted content
	resolvedConflict = 0.85 // sources disagreed; the newest was taken
	openConflict     = 0.5  // sources disagreed and nothing settles it
)

// settled is one part of the question with the claims the answer keeps
// for it (conflicts resolved) and its score.
type settled struct {
	Need   int
	Claims []Claim
	Score  float64
	Notes  []string
}

// settle keeps, of one part's claims, those that agree with the best
// supported group (the newest when they disagree) and scores them.
func settle(need int, claims []Claim, l *Ledger, now time.Time, staleAfter time.Duration) settled {
	groups := groupByFacts(claims)
	s := settled{Need: need}
	best, factor := groups[0], 1.0
	var conflict string
	if len(groups) > 1 {
		var settledBy string
		best, settledBy = pickGroup(groups, l)
		if settledBy == "date" {
			factor = resolvedConflict
			conflict = fmt.Sprintf("sources disagree; the newest (%s) is used", newestDate(best, l).Format("2006-01-02"))
		} else {
			factor = openConflict
			conflict = "sources disagree and none is newer"
		}
	}
	s.Claims = best
	miss := 1.0
	origins := map[string]bool{}
	var tiers []string
	stale := false
	for _, c := range best {
		e := l.Get(c.Evidence)
		if e == nil { // only an unchecked claim (the ablation without the Verifier) cites a ref not read
			e = &kairos.Evidence{Ref: c.Evidence, Tier: kairos.TierModel, Path: "unknown:" + c.Evidence}
		}
		o := origin(e)
		if origins[o] {
			continue
		}
		origins[o] = true
		w := tierWeight[e.Tier]
		switch {
		case !e.PublishedAt.IsZero() && now.Sub(e.PublishedAt) > staleAfter:
			w *= staleFactor
			stale = true
		case e.PublishedAt.IsZero() && e.Tier == kairos.TierWeb:
			w *= undatedWebFactor
		}
		if e.Tier == kairos.TierMemory && e.Tainted {
			w *= taintedMemory
		}
		miss *= 1 - w
		if !slices.Contains(tiers, e.Tier) {
			tiers = append(tiers, e.Tier)
		}
	}
	s.Score = (1 - miss) * factor
	if n := len(origins); n > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d independent sources agree (%s)", n, strings.Join(tiers, ", ")))
	} else {
		s.Notes = append(s.Notes, fmt.Sprintf("one source (%s)", strings.Join(tiers, ", ")))
	}
	if conflict != "" {
		s.Notes = append(s.Notes, conflict)
	}
	if stale {
		s.Notes = append(s.Notes, "a source is older than "+ageText(staleAfter))
	}
	return s
}

// groupByFacts groups claims that state the same facts; claims stating
// no fact agree with every group and join the largest.
func groupByFacts(claims []Claim) [][]Claim {
	bySig := map[string][]Claim{}
	var sigs []string
	var plain []Claim
	for _, c := range claims {
		f := facts(c.Text)
		if len(f) == 0 {
			plain = append(plain, c)
			continue
		}
		keys := make([]string, 0, len(f))
		for k := range f {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sig := strings.Join(keys, "|")
		if _, ok := bySig[sig]; !ok {
			sigs = append(sigs, sig)
		}
		bySig[sig] = append(bySig[sig], c)
	}
	sigs = mergeSubsets(sigs, bySig)
	if len(sigs) == 0 {
		return [][]Claim{plain}
	}
	out := make([][]Claim, len(sigs))
	for i, s := range sigs {
		out[i] = bySig[s]
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	out[0] = append(out[0], plain...)
	return out
}

// mergeSubsets folds a group whose facts are a subset of another's into
// it ("412 km" agrees with "412 km, in the Varn Hills since 1873").
func mergeSubsets(sigs []string, bySig map[string][]Claim) []string {
	var out []string
	for _, s := range sigs {
		merged := false
		for _, t := range sigs {
			if s != t && subset(s, t) && !(subset(t, s) && t > s) {
				bySig[t] = append(bySig[t], bySig[s]...)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, s)
		}
	}
	return out
}

func subset(a, b string) bool {
	have := map[string]bool{}
	for _, k := range strings.Split(b, "|") {
		have[k] = true
	}
	for _, k := range strings.Split(a, "|") {
		if !have[k] {
			return false
		}
	}
	return true
}

// pickGroup chooses among disagreeing groups: the one with the newest
// dated source when one is strictly newest ("date"), else the one with
// the most independent sources ("count").
func pickGroup(groups [][]Claim, l *Ledger) ([]Claim, string) {
	best, bestAt, unique := 0, time.Time{}, false
	for i, g := range groups {
		at := newestDate(g, l)
		switch {
		case at.After(bestAt):
			best, bestAt, unique = i, at, true
		case at.Equal(bestAt):
			unique = false
		}
	}
	if unique && !bestAt.IsZero() {
		return groups[best], "date"
	}
	best, most := 0, 0
	for i, g := range groups {
		n := map[string]bool{}
		for _, c := range g {
			if e := l.Get(c.Evidence); e != nil {
				n[origin(e)] = true
			}
		}
		if len(n) > most {
			best, most = i, len(n)
		}
	}
	return groups[best], "count"
}

func newestDate(g []Claim, l *Ledger) time.Time {
	var at time.Time
	for _, c := range g {
		if e := l.Get(c.Evidence); e != nil && e.PublishedAt.After(at) {
			at = e.PublishedAt
		}
	}
	return at
}

// origin names who stands behind a source: pages of one site are one
// origin, as are the answers of the external model.
func origin(e *kairos.Evidence) string {
	switch {
	case e.URL != "":
		if u, err := url.Parse(e.URL); err == nil {
			return e.Tier + ":" + strings.TrimPrefix(u.Hostname(), "www.")
		}
		return e.Tier + ":" + e.URL
	case e.Tier == kairos.TierModel:
		return e.Tier
	}
	return e.Tier + ":" + e.Path
}

// overall is the answer's confidence: its weakest covered part, lowered
// when parts stay unknown.
func overall(parts []settled, needs int) Confidence {
	if len(parts) == 0 {
		return Confidence{Label: ConfidenceLow, Reason: "nothing checked covers the question"}
	}
	score := 1.0
	var notes []string
	for _, p := range parts {
		score = min(score, p.Score)
		for _, n := range p.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	if open := needs - len(parts); open > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d parts unknown", open, needs))
	}
	c := Confidence{Score: score, Reason: strings.Join(notes, "; ")}
	switch {
	case score >= 0.8:
		c.Label = ConfidenceHigh
	case score >= 0.5:
		c.Label = ConfidenceMedium
	default:
		c.Label = ConfidenceLow
	}
	return c
}

func ageText(d time.Duration) string {
	days := int(d.Hours() / 24)
	switch {
	case days >= 365 && days%365 < 30:
		return fmt.Sprintf("%d years", days/365)
	case days >= 1:
		return fmt.Sprintf("%d days", days)
	}
	return d.String()
}
