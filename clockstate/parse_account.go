package clockstate

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The accounting rule (doc/design.md "Time parser"): every step records
// the byte spans it consumed; what is left is split into runs of letters
// and digits, and a run that carries time meaning (a number, ordinal,
// month, weekday, part of day, unit, zone or city word, connector such as
// till/until/between) turns the result into a question naming it. Words
// without time meaning ("please", "remind me", "call Bob") are fillers.
// In the whole-text mode (clock parse, the schedule tool) every run
// counts; in the envelope only the runs next to the phrase found.

// strongWords carry time meaning wherever they stand.
var strongWords = setOf(`one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty ninety hundred half quarter quarters
first third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth
sixteenth seventeenth eighteenth nineteenth twentieth thirtieth
january february april june july august september october november december
jan feb apr jun jul aug sep sept oct nov dec
monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays
mon tue tues thu thur thurs fri weds
morning mornings afternoon afternoons evening evenings night nights tonight tonite noon midday midnight lunchtime arvo
today tomorrow tmr tmrw tomoz yesterday weekend weekends weekday weekdays fortnight fortnights eod eow cob
seconds secs sec minute minutes min mins hour hours hr hrs day days week weeks wk wks month months year years yr yrs decade decades
ago later earlier hence till until til between through thru every each daily weekly monthly yearly annually fortnightly
o'clock oclock utc gmt zulu eastern pacific central mountain
christmas xmas easter thanksgiving halloween diwali holi eid hanukkah ramadan valentine valentines
teatime bedtime suppertime dinnertime`)

// wholeWords carry time meaning when the whole text is the expression
// ("bank holiday monday" given to clock parse names one Monday), not in
// free text, where "on holiday next week" still says next week.
var wholeWords = setOf(`holiday holidays`)

// weakWords carry time meaning only next to a number or a strong word
// ("from 10", "next friday", "the end of the month"), or right before the
// phrase found ("from 10am" when "from" was not read).
var weakWords = setOf(`may march mar sat sun wed second next last this from after before since to and end start
beginning mid early late am pm a.m p.m h m s d w time same past other thing`)

// leadWords are the weak words that count right before the phrase
// ("from [10am]", "next [at 5pm]"); others there are prepositions
// ("move it to [5pm]").
var leadWords = setOf(`from after before since next last end start beginning mid early late may march mar sat sun wed other second thing`)

// lowerAbbrevWords are the zone abbreviations read in lower case.
const lowerAbbrevWords = `est edt cst cdt mst mdt pst pdt akst akdt hst cet cest eet eest bst ist jst kst aest aedt acst acdt awst nzst nzdt sgt hkt`

var lowerAbbrevs = setOf(lowerAbbrevWords)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// run is a maximal stretch of unread letters, digits and apostrophes.
type run struct {
	text       string
	start, end int
}

// unreadRuns lists the runs of text outside every used span.
func unreadRuns(text string, used []byteSpan) []run {
	cov := make([]bool, len(text))
	for _, s := range used {
		for i := max(s.a, 0); i < s.b && i < len(text); i++ {
			cov[i] = true
		}
	}
	var out []run
	for i := 0; i < len(text); {
		if cov[i] || !isRunByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && !cov[j] && isRunByte(text[j]) {
			j++
		}
		out = append(out, run{text: strings.Trim(text[i:j], "'"), start: i, end: j})
		i = j
	}
	return out
}

func isRunByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '\'' || c >= 0x80
}

// strongRun says whether r carries time meaning by itself.
func strongRun(r string) bool {
	if r == "" {
		return false
	}
	for i := 0; i < len(r); i++ {
		if r[i] >= '0' && r[i] <= '9' {
			return true
		}
	}
	lo := strings.TrimSuffix(asciiLower(r), "'s")
	if strongWords[lo] {
		return true
	}
	if _, ok := abbreviationCandidates[r]; ok && len(r) >= 3 {
		return true
	}
	if lowerAbbrevs[lo] {
		return true
	}
	_, place := lookupZonePlace(lo)
	return place
}

// maxNamed bounds the unread words a question names.
const maxNamed = 3

// unreadWords are the unread runs with time meaning, as the words holding
// them: the strong ones first (a number, a weekday), then the weak ones
// next to them ("after", "to"); at most maxNamed, none twice, nil when
// none. lo and hi bound the phrase found (the envelope checks its
// neighbours).
func (p *parser) unreadWords(lo, hi int) []string {
	runs := unreadRuns(p.text, p.used)
	var out []string
	add := func(w string) {
		for _, o := range out {
			if o == w {
				return
			}
		}
		if len(out) < maxNamed {
			out = append(out, w)
		}
	}
	if p.whole {
		if tz, n := placeInRuns(runs); tz != "" {
			add(n)
		}
	}
	var weak []string
	for i, r := range runs {
		if !p.whole && !nextToPhrase(runs, i, lo, hi, p.text) {
			continue
		}
		switch {
		case strongRun(r.text) || p.whole && wholeWords[asciiLower(r.text)]:
			add(p.wordAt(r))
		case weakWords[asciiLower(r.text)] && weakNear(runs, i, lo, hi):
			weak = append(weak, p.wordAt(r))
		}
	}
	for _, w := range weak {
		add(w)
	}
	return out
}

// weakNear says whether the weak word runs[i] takes part in a time
// expression: next to a number or strong word (fillers between), right
// before the phrase ("from [10am]"), or after it and followed by another
// time word or nothing ("[Thursday] after next"; not "[3pm] after school").
func weakNear(runs []run, i, lo, hi int) bool {
	r := runs[i]
	next, prev := skipFillers(runs, i, 1), skipFillers(runs, i, -1)
	switch {
	case r.end <= lo && (next >= len(runs) || runs[next].start >= hi):
		// Right before the phrase: "from [10am]" counts, "move it to [5pm]" does not.
		return leadWords[asciiLower(r.text)]
	case r.start >= hi && (prev < 0 || runs[prev].end <= lo):
		// Right after it: "[3pm] to 5", "[Thursday] after next"; not "[3pm] after school".
		return next >= len(runs) || strongRun(runs[next].text) || weakWords[asciiLower(runs[next].text)]
	}
	return next < len(runs) && strongRun(runs[next].text) || prev >= 0 && strongRun(runs[prev].text)
}

// skipFillers is the index of the first non-filler run from i in
// direction dir (len(runs) or -1 when none).
func skipFillers(runs []run, i, dir int) int {
	k := i + dir
	for k >= 0 && k < len(runs) && fillerWords[asciiLower(runs[k].text)] {
		k += dir
	}
	return k
}

// placeInRuns finds an unread place name of one to three runs.
func placeInRuns(runs []run) (string, string) {
	if !slices.ContainsFunc(runs, func(r run) bool { return placeFirstWord(r.text) }) {
		return "", "" // no word starts a place: most texts
	}
	ws := make([]word, len(runs))
	for i, r := range runs {
		ws[i] = word{text: asciiLower(r.text), start: r.start, end: r.end}
	}
	for i := range ws {
		if tz, n := placeAt(ws, i, false); n > 0 {
			parts := make([]string, n)
			for k := range parts {
				parts[k] = runs[i+k].text
			}
			return tz, strings.Join(parts, " ")
		}
	}
	return "", ""
}

// onlyGap says whether the bytes between two runs are spaces and
// punctuation only (no third word).
func onlyGap(s string) bool {
	for i := 0; i < len(s); i++ {
		if isRunByte(s[i]) {
			return false
		}
	}
	return true
}

// nextToPhrase says whether run i is the nearest non-filler run before or
// after the phrase [lo, hi).
func nextToPhrase(runs []run, i, lo, hi int, text string) bool {
	r := runs[i]
	if r.end <= lo {
		for k := i + 1; k < len(runs) && runs[k].end <= lo; k++ {
			if !fillerWords[asciiLower(runs[k].text)] {
				return false
			}
		}
		return true
	}
	if r.start >= hi {
		for k := i - 1; k >= 0 && runs[k].start >= hi; k-- {
			if !fillerWords[asciiLower(runs[k].text)] {
				return false
			}
		}
		return true
	}
	return true // inside the phrase: a gap word
}

var fillerWords = setOf(`at on the of in by around about approx approximately a an this`)

// wordAt is the whitespace-separated word holding r, for the question.
func (p *parser) wordAt(r run) string {
	a, b := r.start, r.end
	for a > 0 && p.text[a-1] != ' ' && p.text[a-1] != '\t' && p.text[a-1] != '\n' {
		a--
	}
	for b < len(p.text) && p.text[b] != ' ' && p.text[b] != '\t' && p.text[b] != '\n' {
		b++
	}
	w := strings.Trim(p.text[a:b], ",;:!?()\"")
	if w == "" {
		return r.text
	}
	return w
}

// account applies the rule to a result: an instant, a range or a
// floating reading stands only when no time word is left unread. When the
// whole text is the expression, an invalid result is accounted too: it
// names the time words it could not read, or the phrase it could not make
// a time of, so it is never a silent invalid while the text holds a time
// word (§4.3: every time word is used or named in the question).
func (p *parser) account(res ParseResult, cluster []tmatch) ParseResult {
	silent := res.Kind == KindInvalid && !res.NeedsClarification
	if silent && !p.whole {
		return res // the envelope: no time reference here
	}
	lo, hi := 0, len(p.text)
	if len(cluster) > 0 {
		lo, hi = cluster[0].fullL, cluster[len(cluster)-1].fullR
		for _, c := range cluster {
			lo, hi = min(lo, c.fullL), max(hi, c.fullR)
		}
		p.use(lo, hi) // the connectors between the pieces
	} else if res.Start != nil {
		lo, hi = p.used[0].a, p.used[0].b
	}
	words, read := p.unreadWords(lo, hi), []string(nil)
	if silent {
		read = p.readTimeText(res)
	}
	q := ""
	switch {
	case len(read) > 0:
		q = "I could not make a date or time of " + quoteWords(read)
		if len(words) > 0 {
			q += " or read " + quoteWords(words)
		}
	case len(words) > 0 && res.Phrase != "" && !silent:
		q = "I read " + strconv.Quote(res.Phrase) + " but not " + quoteWords(words)
	case len(words) > 0:
		q = "I could not read " + quoteWords(words)
	}
	if q != "" {
		q += ": which date and time do you mean? Please say it again in one phrase, for example \"Friday 21 March at 4pm\"."
	} else if !silent || len(cluster) > 0 {
		q = p.wordQuestion(res, lo, hi)
	}
	if q != "" && len(words) > 0 && p.whole && p.words.question == "" && len(p.words.unknown) > 0 {
		if w, how := p.besideWord(lo, hi); how == "unknown" {
			// An unknown word and an unread time word: both are named.
			q = strings.Replace(q, quoteWords(words), quoteWords(append([]string{w}, words...)), 1)
		}
	}
	res.Assumptions = p.words.assumptions
	if q == "" {
		res.used = p.used
		return res
	}
	kind := KindInvalid
	if res.Kind == KindFloating {
		kind = KindFloating
	}
	return ParseResult{Kind: kind, NeedsClarification: true, Phrase: res.Phrase, TZ: res.TZ, ClarificationQuestion: q,
		Assumptions: p.words.assumptions}
}

// wordQuestion is the question the words of a whole text raise (issue
// 32): a typo with two readings, an unknown word inside the expression
// [lo, hi) or beside it ("quux 5pm", "5pm in Zorbania"), or a real word
// one edit from a time word right beside it ("his morning"); "" when
// none.
func (p *parser) wordQuestion(res ParseResult, lo, hi int) string {
	if !p.whole {
		return ""
	}
	if p.words.question == "" && len(p.words.unknown) == 0 && !p.words.near {
		return "" // nothing to ask: most texts
	}
	read := "" // what was read, named first so the question quotes the time words it holds
	if res.Phrase != "" {
		read = "I read " + strconv.Quote(res.Phrase) + ", but "
	}
	if q := p.words.question; q != "" {
		if read != "" {
			q = strings.ToLower(q[:1]) + q[1:] // "I read "3pm", but do you mean …"
		}
		return read + q
	}
	w, how := p.besideWord(lo, hi)
	switch {
	case w == "":
		return ""
	case how == "near":
		if ws, _ := readTypo(asciiLower(w)); len(ws) > 0 {
			return read + "do you mean " + strings.Join(quoteAll(ws), " or ") + " by " + strconv.Quote(w) + "?"
		}
		return ""
	case how == "place":
		return read + "I do not know the place " + strconv.Quote(w) + ": which time zone is it in? Please give a city or an IANA name such as Europe/Lisbon."
	case res.Phrase != "":
		return "I read " + strconv.Quote(res.Phrase) + " but not " + strconv.Quote(w) + ": what do you mean by it? Please say the time again without it, or tell me what it means."
	}
	return "I could not read " + strconv.Quote(w) + ": which date and time do you mean?"
}

func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strconv.Quote(displayWord(w))
	}
	return out
}

// besideWord is the first word to ask about around the expression [lo,
// hi), widened over the unread time words next to it ("haf [past 3pm]",
// "[thursday of next] wek"), and how it stands: "unknown", "place" ("5pm
// in Zorbania", "Zorbania time") or "near" (a near miss). An unknown word
// is asked about inside the expression, right beside it (nothing but
// punctuation that ends no sentence, or text already read, between), or
// across connectors when it starts or ends the text or stands against
// another time word ("next wek at 5pm", "Dec 25th at oon"). A capitalised
// word right before the expression, not the first of the text, is a name
// ("call Alice tomorrow").
func (p *parser) besideWord(lo, hi int) (string, string) {
	if len(p.words.unknown) == 0 && !p.words.near {
		return "", ""
	}
	runs := unreadRuns(p.text, p.used)
	lo, hi = p.reach(runs, lo, hi)
	for i, r := range runs {
		lw := asciiLower(strings.Trim(r.text, "'"))
		unknown, near := p.words.unknown[lw], nearMisses[lw]
		if !unknown && !near {
			continue
		}
		inside := r.start >= lo && r.end <= hi
		before := r.end <= lo && p.gapRead(r.end, lo)
		after := r.start >= hi && p.gapRead(hi, r.start)
		if near {
			if inside || before || after || p.nearAcross(runs, i, lo, hi) {
				return p.wordAt(r), "near"
			}
			continue
		}
		afterIn := i > 0 && strings.EqualFold(runs[i-1].text, "in")
		how := "unknown"
		if afterIn || p.timeWordAfter(r.end) {
			how = "place"
		}
		name := before && isUpperASCII(r.text[0]) && p.anyRunBefore(r.start)
		switch {
		case inside || after || before && !name:
			return p.wordAt(r), how
		case r.end <= lo && p.gapConnectors(runs, r.end, lo) && (afterIn || !p.anyRunBefore(r.start) || i > 0 && p.timeRun(runs[i-1])):
			return p.wordAt(r), how
		case r.start >= hi && p.gapConnectors(runs, hi, r.start) && (afterIn || !p.anyRunAfter(r.end) || i+1 < len(runs) && p.timeRun(runs[i+1])):
			return p.wordAt(r), how
		}
	}
	return "", ""
}

// nearAcross says whether the near miss runs[i] stands across connectors
// from the expression and against another time word ("end of the moth
// at 9am"), or after "of" ("tuesday of the moth"); "very" counts before
// a day or unit ("very other friday").
func (p *parser) nearAcross(runs []run, i, lo, hi int) bool {
	r := runs[i]
	if strings.EqualFold(r.text, "very") {
		return reVeryDay.MatchString(p.text[r.end:])
	}
	k := i - 1
	for k >= 0 && connectors[asciiLower(runs[k].text)] {
		k--
	}
	if r.end <= lo && p.gapConnectors(runs, r.end, lo) {
		return k >= 0 && p.timeRun(runs[k]) && p.gapConnectors(runs, runs[k].end, r.start)
	}
	if r.start >= hi && p.gapConnectors(runs, hi, r.start) {
		return strings.Contains(" "+asciiLower(p.text[hi:r.start])+" ", " of ")
	}
	return false
}

// reVeryDay: "very" before a day or unit reads as "every".
var reVeryDay = regexp.MustCompile(`(?i)^\s+(?:other|second|` + reWeekdayWord + `|day|week|month|year|morning|evening|night)\b`)

// timeRun says whether r is a time word (of the vocabulary, no connector
// or sentence word).
func (p *parser) timeRun(r run) bool {
	w := asciiLower(r.text)
	return vocabulary[w] && !connectors[w] && !sentenceWords[w]
}

func (p *parser) anyRunBefore(i int) bool {
	for k := 0; k < i; k++ {
		if isRunByte(p.text[k]) {
			return true
		}
	}
	return false
}

func (p *parser) anyRunAfter(i int) bool {
	for k := i; k < len(p.text); k++ {
		if isRunByte(p.text[k]) {
			return true
		}
	}
	return false
}

// reach widens [lo, hi) over the unread time words next to it (a word of
// the vocabulary that is no sentence word, and the connectors leading to
// one).
func (p *parser) reach(runs []run, lo, hi int) (int, int) {
	timeWord := func(k int) bool {
		w := asciiLower(runs[k].text)
		return vocabulary[w] && !connectors[w]
	}
	for {
		i := len(runs) - 1
		for i >= 0 && runs[i].end > lo {
			i--
		}
		edge := lo
		for i >= 0 && p.gapRead(runs[i].end, edge) && connectors[asciiLower(runs[i].text)] {
			edge, i = runs[i].start, i-1
		}
		if i < 0 || !p.gapRead(runs[i].end, edge) || !timeWord(i) {
			break
		}
		lo = runs[i].start
	}
	for {
		i := 0
		for i < len(runs) && runs[i].start < hi {
			i++
		}
		edge := hi
		for i < len(runs) && p.gapRead(edge, runs[i].start) && connectors[asciiLower(runs[i].text)] {
			edge, i = runs[i].end, i+1
		}
		if i >= len(runs) || !p.gapRead(edge, runs[i].start) || !timeWord(i) {
			break
		}
		hi = runs[i].end
	}
	return lo, hi
}

// gapConnectors says whether text[a:b] holds only connector words
// ("at", "on") besides what gapRead allows.
func (p *parser) gapConnectors(runs []run, a, b int) bool {
	for _, r := range runs {
		if r.start >= a && r.end <= b && !connectors[asciiLower(r.text)] {
			return false
		}
	}
	for i := a; i < b; i++ {
		if strings.IndexByte(".!?;\n", p.text[i]) >= 0 {
			return false
		}
	}
	return true
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }

// inByteSpans says whether byte i lies in one of spans.
func inByteSpans(i int, spans []byteSpan) bool {
	for _, s := range spans {
		if i >= s.a && i < s.b {
			return true
		}
	}
	return false
}

// gapRead says whether text[a:b] holds only white space, punctuation that
// ends no sentence, and bytes a step read.
func (p *parser) gapRead(a, b int) bool {
	cov := func(i int) bool { return inByteSpans(i, p.used) }
	for i := a; i < b; i++ {
		c := p.text[i]
		if strings.IndexByte(".!?;\n", c) >= 0 && !cov(i) || isRunByte(c) && !cov(i) {
			return false
		}
	}
	return true
}

// timeWordAfter says whether the word after i is "time" ("Zorbania time").
func (p *parser) timeWordAfter(i int) bool {
	rest := strings.TrimLeft(p.text[i:], " ")
	return len(rest) >= 4 && strings.EqualFold(rest[:4], "time") && (len(rest) == 4 || !isRunByte(rest[4]))
}

// readTimeText is what an invalid result read but could not make a time
// of ("the 31st of february", "Feb 30", a zone with no time): the phrase,
// else the zone; nil when nothing with time meaning was read.
func (p *parser) readTimeText(res ParseResult) []string {
	if res.Phrase != "" {
		return []string{res.Phrase}
	}
	if len(p.zones) > 0 {
		z := p.zones[len(p.zones)-1]
		return []string{strings.TrimSpace(p.text[z.a:z.b])}
	}
	return nil
}

// quoteWords is "a", "a" and "b", or "a", "b" and "c".
func quoteWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
