package research

import (
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

func TestSettleAndConfidence(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	stale := 2 * 365 * 24 * time.Hour
	day := func(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }
	l := NewLedger()
	add := func(tier, url, path, text string, at time.Time) string {
		return l.Add(&kairos.Evidence{Tier: tier, URL: url, Path: path, Text: text, PublishedAt: at, Tainted: tier != kairos.TierMemory}).Ref
	}
	off := add(kairos.TierOffline, "", "rivers/kestrel.md", "The Kestrel River is 412 kilometres long.", day("2025-01-01"))
	webA := add(kairos.TierWeb, "https://facts.example/kestrel", "", "The Kestrel River is 412 kilometres long.", day("2026-01-01"))
	webA2 := add(kairos.TierWeb, "https://facts.example/rivers", "", "The Kestrel River is 412 kilometres long.", day("2026-01-02"))
	old := add(kairos.TierWeb, "https://old.example/tarn", "", "Population of Tarn is 41,200 people.", day("2015-06-01"))
	fresh := add(kairos.TierWeb, "https://census.example/tarn", "", "Population of Tarn is 45,870 people.", day("2025-06-01"))
	undatedA := add(kairos.TierWeb, "https://a.example/x", "", "The bridge is 120 metres long.", time.Time{})
	undatedB := add(kairos.TierWeb, "https://b.example/y", "", "The bridge is 150 metres long.", time.Time{})
	mem := add(kairos.TierMemory, "", "m1", "Dentist appointment on 2026-12-03 at 14:30.", day("2026-11-01"))
	c := func(ref, text string) Claim { return Claim{Text: text, Evidence: ref} }

	for _, tc := range []struct {
		name      string
		claims    []Claim
		label     string
		keep      string // a ref the kept claims must hold
		drop      string // a ref they must not
		reasonHas string
	}{
		{"one offline source", []Claim{c(off, "412 km")}, ConfidenceMedium, off, "", "one source (offline)"},
		{"one memory", []Claim{c(mem, "On 2026-12-03 at 14:30")}, ConfidenceHigh, mem, "", "one source (memory)"},
		{"two sites agree", []Claim{c(off, "412 km"), c(webA, "It is 412 km long")}, ConfidenceHigh, off, "", "2 independent sources agree (offline, web)"},
		{"one site twice is one origin", []Claim{c(webA, "412 km"), c(webA2, "412 km")}, ConfidenceMedium, webA, "", "one source (web)"},
		{"fresh beats stale", []Claim{c(old, "Tarn has 41,200 people"), c(fresh, "Tarn has 45,870 people")}, ConfidenceLow, fresh, old, "the newest (2025-06-01) is used"},
		{"undated disagreement", []Claim{c(undatedA, "120 metres"), c(undatedB, "150 metres")}, ConfidenceLow, "", "", "none is newer"},
		{"stale alone", []Claim{c(old, "Tarn has 41,200 people")}, ConfidenceLow, old, "", "older than 2 years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settle(0, tc.claims, l, now, stale)
			conf := overall([]settled{s}, 1)
			if conf.Label != tc.label || !strings.Contains(conf.Reason, tc.reasonHas) {
				t.Fatalf("confidence %+v, want %s with %q", conf, tc.label, tc.reasonHas)
			}
			refs := map[string]bool{}
			for _, k := range s.Claims {
				refs[k.Evidence] = true
			}
			if tc.keep != "" && !refs[tc.keep] || tc.drop != "" && refs[tc.drop] {
				t.Fatalf("kept %v, want %s kept and %s dropped", refs, tc.keep, tc.drop)
			}
		})
	}
	if conf := overall([]settled{settle(0, []Claim{c(mem, "On 2026-12-03")}, l, now, stale)}, 2); !strings.Contains(conf.Reason, "1 of 2 parts unknown") {
		t.Fatalf("a half-answered question: %+v", conf)
	}
	if conf := overall(nil, 1); conf.Label != ConfidenceLow || conf.Score != 0 {
		t.Fatalf("nothing covered: %+v", conf)
	}
}
