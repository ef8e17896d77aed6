package research

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// Claim is one statement of an answer with the evidence it rests on.
type Claim struct {
	Need     int    `json:"need"`     // the part of the question it answers (index into the plan's needs)
	Text     string `json:"text"`     // the statement
	Evidence string `json:"evidence"` // the cited evidence's ref ("E3")
	Quote    string `json:"quote"`    // words of that evidence, verbatim
}

// Ledger is a trace's evidence: every source read, by ref. It is safe for
// concurrent use.
type Ledger struct {
	mu    sync.Mutex
	byRef map[string]*kairos.Evidence
	order []string
}

// NewLedger returns a ledger holding es.
func NewLedger(es ...*kairos.Evidence) *Ledger {
	l := &Ledger{byRef: map[string]*kairos.Evidence{}}
	for _, e := range es {
		l.put(e)
	}
	return l
}

func (l *Ledger) put(e *kairos.Evidence) {
	if _, dup := l.byRef[e.Ref]; !dup {
		l.order = append(l.order, e.Ref)
	}
	l.byRef[e.Ref] = e
}

// Add keeps e under the next free ref ("E<n>") and returns it.
func (l *Ledger) Add(e *kairos.Evidence) *kairos.Evidence {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Ref = fmt.Sprintf("E%d", len(l.order)+1)
	l.put(e)
	return e
}

// Get returns the evidence with the ref, or nil.
func (l *Ledger) Get(ref string) *kairos.Evidence {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byRef[strings.TrimSpace(ref)]
}

// All returns the evidence in the order it was read.
func (l *Ledger) All() []*kairos.Evidence {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*kairos.Evidence, len(l.order))
	for i, r := range l.order {
		out[i] = l.byRef[r]
	}
	return out
}

// Len is how many sources the ledger holds.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.order)
}

// Quote bounds: a quote proves something only when it is a few words
// long, and a whole page is not a quote.
const (
	minQuoteWords = 3
	maxQuoteBytes = 600
)

// Check returns nil when the ledger backs the claim, or why not (the
// reason kept in the trace). The rules, all enforced here and nowhere
// else:
//
//   - the claim cites a ref the ledger holds (a source never read cannot
//     be cited);
//   - its quote has at least three words, at most 600 bytes, and appears
//     verbatim in the cited text, up to runs of white space and
//     typographic quotes, apostrophes and dashes (a leading or trailing
//     ellipsis is ignored; one inside is an omission and fails);
//   - every number, date part, month name, number word and web address
//     of the claim appears in the quote;
//   - the claim is about the quote: at least two in five of its content
//     words appear in the quote or the question.
func (l *Ledger) Check(c Claim, question string) error {
	e := l.Get(c.Evidence)
	if e == nil {
		return fmt.Errorf("cites %q, which is not in the ledger", kairos.Clip(c.Evidence, 20))
	}
	if strings.TrimSpace(c.Text) == "" {
		return fmt.Errorf("states nothing")
	}
	q := trimEllipsis(normalize(c.Quote))
	switch {
	case wordCount(q) < minQuoteWords:
		return fmt.Errorf("its quote has fewer than %d words", minQuoteWords)
	case len(q) > maxQuoteBytes:
		return fmt.Errorf("its quote is longer than %d bytes", maxQuoteBytes)
	case !strings.Contains(normalize(e.Text), q):
		return fmt.Errorf("its quote is not in %s", e.Ref)
	}
	if miss := missingFacts(c.Text, q); len(miss) > 0 {
		slices.Sort(miss)
		return fmt.Errorf("states %s, which its quote does not", strings.Join(miss, ", "))
	}
	if !aboutQuote(c.Text, q+" "+question) {
		return fmt.Errorf("is not about its quote")
	}
	return nil
}

// wordCount counts the words of s that hold a letter or a digit.
func wordCount(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

var typographic = strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'",
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u00ab", `"`, "\u00bb", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2212", "-", "\u00a0", " ")

// normalize collapses white space and maps typographic punctuation to
// ASCII; it changes nothing else (case and words stay).
func normalize(s string) string {
	s = typographic.Replace(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func trimEllipsis(s string) string {
	for _, e := range []string{"...", "…"} {
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), e), e))
	}
	return s
}

// aboutQuote reports whether at least two in five of the claim's content
// words (four letters or more, not stop words) occur in ref, compared on
// their first five letters so that "rises" finds "rising".
func aboutQuote(claim, ref string) bool {
	have := map[string]bool{}
	for _, w := range contentWords(ref) {
		have[stem(w)] = true
	}
	words := contentWords(claim)
	if len(words) == 0 {
		return true // only numbers, which the facts rule checked
	}
	n := 0
	for _, w := range words {
		if have[stem(w)] {
			n++
		}
	}
	return 5*n >= 2*len(words)
}

func stem(w string) string {
	if utf8.RuneCountInString(w) <= 5 {
		return w
	}
	return string([]rune(w)[:5])
}

// contentWords returns the lower-case words of s of four letters or more
// that are not stop words.
func contentWords(s string) []string {
	var out []string
	for _, w := range wordRe.FindAllString(s, -1) {
		w = strings.ToLower(w)
		if utf8.RuneCountInString(w) >= 4 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against also been before being below between both
		could does doing down during each from further have having here how into itself just more most much must
		only other over same should some such than that their theirs them then there these they this those through
		under until very were what when where which while whom with would your yours yourself will shall cannot
		according source sources says said states stated answer question`) {
		m[w] = true
	}
	return m
}()
