package research_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/tools/research"
)

var jsonUnmarshal = json.Unmarshal

func sourceTiers(res *research.Result) []string {
	var out []string
	for _, s := range res.Sources {
		out = append(out, s.Tier)
	}
	return out
}

// A question the user's memory answers stops there: no offline search
// result is read, no web search is made.
func TestMemoryAnswersWithoutWeb(t *testing.T) {
	r := newRig(t)
	r.remember("Dentist appointment on 2026-12-03 at 14:30 (Europe/Berlin) with Dr. Alvarez.", r.now.AddDate(0, 0, -3))
	r.file("health/dentist.md", "# Dentist\nThe dentist practice opens at 08:00.")
	r.search.results["dentist"] = []research.SearchResult{{Title: "x", URL: "http://facts.example/dentist"}}
	res := r.ask("When is my dentist appointment?")
	if res.Abstained || !strings.Contains(res.Answer, "2026-12-03") || !strings.Contains(res.Answer, "[1]") {
		t.Fatalf("answer = %+v", res)
	}
	if !slices.Equal(res.TiersUsed, []string{kairos.TierMemory}) || !slices.Equal(sourceTiers(res), []string{kairos.TierMemory}) {
		t.Fatalf("tiers used %v, sources %v", res.TiersUsed, sourceTiers(res))
	}
	if r.search.calls() != 0 || r.web.hitsOn("facts.example") != 0 {
		t.Fatalf("a memory answer made %d web searches and %d fetches", r.search.calls(), r.web.hitsOn("facts.example"))
	}
	if res.Confidence != research.ConfidenceHigh || res.Status != kairos.ResearchAnswered || res.Untrusted {
		t.Fatalf("confidence %s (%s), status %s, untrusted %v", res.Confidence, res.ConfidenceReason, res.Status, res.Untrusted)
	}
	if s := res.Sources[0]; !strings.Contains("Dentist appointment on 2026-12-03 at 14:30 (Europe/Berlin) with Dr. Alvarez.", s.Quote) || s.Quote == "" {
		t.Fatalf("source quote %q is not the memory's words", s.Quote)
	}
}

// The offline folder answers what memory does not, from Markdown, HTML,
// text and PDF alike, and the web is not asked.
func TestOfflineFolderAnswers(t *testing.T) {
	r := newRig(t)
	r.file("rivers/kestrel.md", "# Kestrel River\n\nThe **Kestrel River** is 412 kilometres long and rises in the Varn Hills.\n")
	r.file("astro/moon.html", "<html><head><title>Tidal locking</title><script>var x='The Moon is 99 days';</script></head><body><h1>Tidal locking</h1><p>The Moon keeps one face to the Earth; its rotation period is 27.3 days.</p></body></html>")
	r.file("notes/orrin.txt", "Mount Orrin\nMount Orrin stands 2,310 metres high above the Sel valley.")
	r.file("papers/bridge.pdf", string(testkit.MakePDF([]string{"The Harlow Bridge opened in 1911 after six years of work."})))
	r.search.results["river"] = []research.SearchResult{{Title: "x", URL: "http://facts.example/kestrel"}}
	for q, want := range map[string]string{
		"How long is the Kestrel River?":             "412",
		"What is the rotation period of the Moon?":   "27.3",
		"How high is Mount Orrin?":                   "2,310",
		"When did the Harlow Bridge open?":           "1911",
		"What is the rotation period of the Moon ?":  "27.3", // the same question again: a new trace, same answer
		"How long is the Kestrel River, in the end?": "412",
	} {
		res := r.ask(q)
		if res.Abstained || !strings.Contains(res.Answer, want) || !slices.Equal(res.TiersUsed, []string{kairos.TierOffline}) {
			t.Errorf("%q: %q (tiers %v, status %s, sources %+v)", q, res.Answer, res.TiersUsed, res.Status, res.Sources)
		}
		if strings.Contains(res.Answer, "99 days") {
			t.Errorf("%q: a script's text was indexed: %q", q, res.Answer)
		}
	}
	if r.search.calls() != 0 {
		t.Fatalf("offline answers made %d web searches", r.search.calls())
	}
}

// The web tier reads only allowed domains, and only URLs a search
// returned; a result off the list is neither read nor cited.
func TestWebTierKeepsToTheAllowList(t *testing.T) {
	r := newRig(t)
	r.web.page("facts.example/tarn", `<html><head><meta name="date" content="2025-06-01"></head><body><p>Tarn had a population of 45,870 at the 2025 census.</p></body></html>`)
	r.web.page("evil.example/tarn", `<html><body><p>Tarn has a population of 99,999 people.</p></body></html>`)
	r.web.page("facts.example/redirect", "REDIRECT http://evil.example/tarn")
	r.search.results["tarn"] = []research.SearchResult{
		{Title: "Evil", URL: "http://evil.example/tarn", Snippet: "Tarn has a population of 99,999 people, says this long snippet."},
		{Title: "Redirect", URL: "http://facts.example/redirect"},
		{Title: "Tarn", URL: "http://facts.example/tarn"}}
	res := r.ask("What is the population of Tarn?")
	if res.Abstained || !strings.Contains(res.Answer, "45,870") || strings.Contains(res.Answer, "99,999") {
		t.Fatalf("answer %q", res.Answer)
	}
	if n := r.web.hitsOn("evil.example"); n != 0 {
		t.Fatalf("the off-list host got %d requests (directly or through a redirect)", n)
	}
	if res.Sources[0].URL != "http://facts.example/tarn" || res.Sources[0].PublishedAt != "2025-06-01" || !res.Untrusted {
		t.Fatalf("source %+v, untrusted %v", res.Sources[0], res.Untrusted)
	}
	_, st := r.trace(res.TraceID)
	if refused, _ := json.Marshal(st["refused"]); !strings.Contains(string(refused), "evil.example") {
		t.Fatalf("the off-list result is not in the trace's refusals: %s", refused)
	}
}

// With nothing that answers, the answer says so, shows what was read,
// and cites nothing.
func TestAbstainsWhenUncovered(t *testing.T) {
	r := newRig(t)
	r.pol.Research.Tiers = []string{kairos.TierMemory, kairos.TierOffline, kairos.TierWeb}
	r.file("notes/kell.txt", "Mount Kell\nMount Kell has an elevation of 2,950 metres.")
	res := r.ask("What is the elevation of Mount Varrow?")
	if !res.Abstained || len(res.Sources) != 0 || res.Status != kairos.ResearchAbstained || !strings.Contains(res.Answer, "I don't know") {
		t.Fatalf("result %+v", res)
	}
	if len(res.Found) == 0 || res.Found[0].Title != "Mount Kell" || res.Confidence != research.ConfidenceLow {
		t.Fatalf("found %+v, confidence %s", res.Found, res.Confidence)
	}
}

// Claims that misquote, misstate a number or cite the wrong source are
// dropped (and kept in the trace with why); the others still answer.
func TestBadClaimsAreDropped(t *testing.T) {
	r := newRig(t)
	r.script.SlipEvery = 1
	r.file("rivers/kestrel.md", "The Kestrel River is 412 kilometres long and rises in the Varn Hills.")
	r.file("rivers/kestrel2.md", "Kestrel River facts: the river is 412 kilometres long.")
	res := r.ask("How long is the Kestrel River?")
	_, st := r.trace(res.TraceID)
	dropped, _ := st["dropped"].([]any)
	if len(dropped) == 0 {
		t.Fatalf("no claim was dropped with every claim slipping: %+v", res)
	}
	for _, s := range res.Sources {
		if !strings.Contains("The Kestrel River is 412 kilometres long and rises in the Varn Hills. Kestrel River facts: the river is 412 kilometres long.", s.Quote) {
			t.Fatalf("a shown quote is not verbatim: %q", s.Quote)
		}
	}
	if strings.Contains(res.Answer, "413") {
		t.Fatalf("a slipped number reached the answer: %q", res.Answer)
	}
	// Told why its claims failed, the Researcher read the sources again
	// and copied the quotes exactly.
	if res.Abstained || !strings.Contains(res.Answer, "412") {
		t.Fatalf("no answer after the retry: %q", res.Answer)
	}
	told := false
	for _, req := range r.model.Requests() {
		told = told || strings.Contains(req.Messages[1].Content, `"rejected"`)
	}
	if !told {
		t.Fatal("the Researcher was never told which claims failed")
	}
}

// ZIM archives are searched through kiwix-serve's full-text search and
// their articles read from the same host only.
func TestKiwixTier(t *testing.T) {
	r := newRig(t)
	var paths []string
	zim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		paths = append(paths, req.URL.Path)
		switch req.URL.Path {
		case "/search":
			if req.URL.Query().Get("format") != "xml" {
				http.NotFound(w, req)
				return
			}
			fmt.Fprint(w, `<?xml version="1.0"?><rss><channel>
<item><title>Elsewhere</title><link>http://facts.example/zim-escape</link></item>
<item><title>Varn Lighthouse</title><link>/wiki/A/Varn_Lighthouse.html</link></item></channel></rss>`)
		case "/wiki/A/Varn_Lighthouse.html":
			fmt.Fprint(w, `<html><head><title>Varn Lighthouse</title></head><body><span class="kiwix"><span id="kiwixtoolbar">Search 'Wiki'</span>
</span><p>The Varn Lighthouse was first lit in 1843.</p></body></html>`)
		default:
			http.NotFound(w, req)
		}
	}))
	defer zim.Close()
	r.pol.Research.Offline.Dir = ""
	r.pol.Research.Offline.KiwixURL = zim.URL
	res := r.ask("When was the Varn Lighthouse first lit?")
	if res.Abstained || !strings.Contains(res.Answer, "1843") || res.Sources[0].URL != zim.URL+"/wiki/A/Varn_Lighthouse.html" || res.Sources[0].Tier != kairos.TierOffline {
		t.Fatalf("result %q, sources %+v", res.Answer, res.Sources)
	}
	if r.web.hitsOn("facts.example") != 0 {
		t.Fatal("a ZIM search result on another host was fetched")
	}
}

// A part only a stale reference answers stays open for a fresher tier:
// the newer page wins, and the answer says the sources disagree.
func TestStaleReferenceLooksFurther(t *testing.T) {
	r := newRig(t)
	r.file("museums/harlow.md", "The Harlow Museum opens at 09:00 every day.")
	old := time.Date(2015, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(r.dir, "museums/harlow.md"), old, old); err != nil {
		t.Fatal(err)
	}
	r.web.page("facts.example/harlow", `<html><head><meta name="date" content="2026-05-01"></head><body><p>The Harlow Museum opens at 10:00 every day.</p></body></html>`)
	r.search.results["harlow"] = []research.SearchResult{{Title: "Harlow Museum", URL: "http://facts.example/harlow"}}
	res := r.ask("What time does the Harlow Museum open?")
	if !strings.Contains(res.Answer, "10:00") || strings.Contains(res.Answer, "09:00") || !slices.Equal(res.TiersUsed, []string{kairos.TierOffline, kairos.TierWeb}) {
		t.Fatalf("answer %q, tiers %v", res.Answer, res.TiersUsed)
	}
	if !strings.Contains(res.ConfidenceReason, "the newest (2026-05-01) is used") {
		t.Fatalf("confidence %s: %s", res.Confidence, res.ConfidenceReason)
	}
}
