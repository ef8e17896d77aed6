package clockstate

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// corpusCase is one line of testdata/corpus.tsv (written by
// testdata/gen_corpus.py from facts of chrono, Duckling, dateparser,
// olebedev/when and CLOCK.md; expected instants computed with zoneinfo).
type corpusCase struct {
	line                            int
	cat, text, tz                   string
	ref                             time.Time
	kind, start, end, ask, src, oos string
	repeat                          string // the RRULE expected, when the phrase recurs
}

func loadCorpus(tb testing.TB) []corpusCase {
	tb.Helper()
	f, err := os.Open("testdata/corpus.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if len(c) < 9 {
			tb.Fatalf("corpus line %d: %d fields, want 9 or 10", n, len(c))
		}
		for len(c) < 11 {
			c = append(c, "")
		}
		ref, err := time.Parse(time.RFC3339, c[3])
		if err != nil {
			tb.Fatalf("corpus line %d: ref: %v", n, err)
		}
		tz := c[2]
		if tz == "-" {
			tz = ""
		}
		out = append(out, corpusCase{line: n, cat: c[0], text: c[1], tz: tz, ref: ref, kind: c[4], start: c[5], end: c[6], ask: c[7], src: c[8], oos: c[9], repeat: c[10]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// check says what is wrong with r for c ("" when it is right).
func (c corpusCase) check(r ParseResult) string {
	got := r.Kind + " " + startOf(r) + " " + endOf(r)
	if r.NeedsClarification {
		got += " ? " + r.ClarificationQuestion
	}
	askOK := c.ask == "-" || strings.Contains(strings.ToLower(r.ClarificationQuestion), strings.ToLower(c.ask))
	switch c.kind {
	case "question":
		if !r.NeedsClarification || !askOK || r.Start != nil {
			return got
		}
	case KindFloating:
		if r.Kind != KindFloating || !r.NeedsClarification || !askOK || r.Start != nil {
			return got
		}
	case KindInvalid:
		if r.Kind != KindInvalid || r.Start != nil {
			return got
		}
	default:
		want := c.kind + " " + strings.TrimPrefix(c.start, "-") + " " + strings.TrimPrefix(c.end, "-") + " " + c.repeat
		if r.NeedsClarification || r.Kind+" "+startOf(r)+" "+endOf(r)+" "+r.Repeat != want {
			return got + " " + r.Repeat + "  (want " + want + ")"
		}
	}
	return ""
}

// TestCorpus runs the whole corpus and logs the pass rate per category;
// every case passes or is marked out of scope with its reason.
func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 600 {
		t.Fatalf("corpus has %d cases, want at least 600", len(cases))
	}
	type tally struct{ pass, total, oos int }
	per := map[string]*tally{}
	confidentWrong := 0
	for _, c := range cases {
		tl := per[c.cat]
		if tl == nil {
			tl = &tally{}
			per[c.cat] = tl
		}
		tl.total++
		r := ParseAnchoredTime(c.text, c.tz, c.ref)
		bad := c.check(r)
		if bad != "" && r.Start != nil && !r.NeedsClarification {
			confidentWrong++ // an instant claimed that is not the meaning (§4.3)
		}
		switch {
		case bad == "":
			tl.pass++
		case c.oos != "":
			tl.oos++
		default:
			t.Errorf("corpus line %d [%s] %q tz=%q ref=%s: got %s", c.line, c.cat, c.text, c.tz, c.ref.Format(time.RFC3339), bad)
		}
	}
	cats := make([]string, 0, len(per))
	for k := range per {
		cats = append(cats, k)
	}
	sort.Strings(cats)
	all := tally{}
	for _, k := range cats {
		tl := per[k]
		all.pass, all.total, all.oos = all.pass+tl.pass, all.total+tl.total, all.oos+tl.oos
		t.Logf("%-10s %4d/%4d pass (%5.1f%%), %d out of scope", k, tl.pass, tl.total, 100*float64(tl.pass)/float64(tl.total), tl.oos)
	}
	t.Logf("%-10s %4d/%4d pass (%5.1f%%), %d out of scope", "all", all.pass, all.total, 100*float64(all.pass)/float64(all.total), all.oos)
	t.Logf("confident and wrong (an instant that is not the meaning, out of scope included): %d", confidentWrong)
	if confidentWrong > 0 {
		t.Errorf("%d results are confident and wrong; want 0", confidentWrong)
	}
}

// BenchmarkParseCorpus parses every corpus phrase once per iteration;
// ns/phrase (wall clock) and cpu-ns/phrase are reported next to ns/op.
func BenchmarkParseCorpus(b *testing.B) {
	cases := loadCorpus(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		for _, c := range cases {
			ParseAnchoredTime(c.text, c.tz, c.ref)
		}
	}
	n := float64(b.N * len(cases))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/phrase")
	// CPU time per phrase (GC included) stays true on a loaded machine,
	// where wall-clock ns/phrase grows with the load.
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/n, "cpu-ns/phrase")
}

// FuzzParseCorpus starts from the corpus phrases: whatever the input, a
// question never comes with an instant (§4.3) and an end is never before
// its start.
func FuzzParseCorpus(f *testing.F) {
	for i, c := range loadCorpus(f) {
		if i%7 == 0 {
			f.Add(c.text, c.tz, c.ref.Unix())
		}
	}
	f.Fuzz(func(t *testing.T, text, tz string, at int64) {
		r := ParseAnchoredTime(text, tz, time.Unix(at%(1<<35), 0).UTC())
		if r.NeedsClarification && (r.Start != nil || r.End != nil) {
			t.Fatalf("%q %q: a question with an instant: %+v", text, tz, r)
		}
		if r.End != nil && (r.Start == nil || r.End.Before(*r.Start)) {
			t.Fatalf("%q %q: end before start: %+v", text, tz, r)
		}
	})
}
