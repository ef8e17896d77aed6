package clockstate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/olebedev/when/rules"
)

// Kinds of a ParseResult (§4.4).
const (
	KindAbsolute = "absolute"
	KindRelative = "relative"
	KindFloating = "floating"
	KindInvalid  = "invalid"
)

// ParseResult is parse_anchored_time's result (§4.4). Its JSON form is
// exactly what `kairos clock parse` prints:
// {"kind", "start"?, "end"?, "repeat"?, "needs_clarification", "clarification_question"?, "assumptions"?}
// with RFC 3339 instants carrying the anchor's offset.
type ParseResult struct {
	Kind  string     `json:"kind"`
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// Repeat is an RFC 5545 RRULE when the phrase recurs ("every weekday
	// at 8am"); Start is then the first occurrence.
	Repeat                string `json:"repeat,omitempty"`
	NeedsClarification    bool   `json:"needs_clarification"`
	ClarificationQuestion string `json:"clarification_question,omitempty"`
	// Assumptions are what was read into the text ("read 'wedensday' as
	// Wednesday"): shown with the result, so an approval states them.
	Assumptions []string `json:"assumptions,omitempty"`

	// Phrase is the time expression found in the text.
	Phrase string `json:"-"`
	// TZ is the zone the result was anchored to ("" when none).
	TZ string `json:"-"`
	// Local says whether Start fell in a DST gap or fold (compatible rule).
	Local LocalKind `json:"-"`
	// DayOnly says the result is a day or days with no time of day
	// ("friday", "on the 3rd", "next week"): Start is the first day's
	// midnight, a bound, never a time to act at (issue 32).
	DayOnly bool `json:"-"`
	// used are the byte spans of the text the parse read (the accounting
	// rule; tests check no time word lies outside them), in read.
	used []byteSpan
	// read is the text the parse read: the whole text with its fillers
	// dropped, its txt-speak and typos written as their words.
	read string
}

// maxParseInput bounds the text examined (the expression is expected near
// the start of a message; the rest is not scanned).
const maxParseInput = 2048

// ParseAnchoredTime parses the first time expression in text (§4.4
// parse_anchored_time), anchored to the Session TZ tz at reference instant
// ref:
//
//   - an ISO-8601 timestamp with offset is absolute whatever tz is;
//   - a relative expression ("in 2 hours", "3 days ago", "2 weeks from
//     now") is relative: ref plus the amount, days and longer counted in
//     the calendar of tz (or of ref's location when tz is empty);
//   - any other date or time ("9am", "tonight", "tomorrow 9am", "March 3")
//     is floating without a zone (no instant, a clarification question:
//     §4.3) and absolute once anchored — to tz, or to a zone stated in the
//     text itself ("9am Tokyo time", "UTC+9", "Asia/Tokyo");
//   - an abbreviation (EST, CST, IST…) is resolved only from tz (the
//     user's known zone); otherwise it is asked about, unless one zone's
//     rules explain it (CEST, JST): then it is read as that zone with an
//     assumption (Assumptions);
//   - the whole text's words are read first (parse_words.go): typos and
//     txt-speak as their words (a typo with an assumption), fillers
//     dropped, an unknown word inside or beside the expression asked about;
//   - local times in DST gaps and folds follow ResolveLocal's compatible
//     rule; dates without a time are whole-day windows (start, end), parts
//     of the day are windows (morning 06–12, lunch 12–14, after lunch
//     14–18, afternoon 12–18, evening 18–22, tonight 18–24; "first thing"
//     is the morning's start), a time without a date is its next
//     occurrence.
//
// Nothing recognisable gives kind invalid.
func ParseAnchoredTime(text, tz string, ref time.Time) ParseResult {
	return parseWith(text, tz, nil, ref, true)
}

// ParseCLI is `kairos clock parse TEXT [--tz IANA] [--at RFC3339]`: tz may
// be empty (no anchor) and at zero (now). An unknown tz is an EINVALID
// error, for exit code 2.
func ParseCLI(text, tz string, at time.Time) (ParseResult, error) {
	if tz != "" {
		if _, err := LoadTZ(tz); err != nil {
			return ParseResult{}, err
		}
	}
	if at.IsZero() {
		at = time.Now().UTC()
	}
	return ParseAnchoredTime(text, tz, at), nil
}

type ruleID int

const (
	rWeekday ruleID = iota
	rCasualDate
	rCasualTime
	rHour
	rHourMinute
	rDeadline
	rPastTime
	rMonthDate
	rSlashDate
	rFromNow
	rCompactIn
	rMidnight
	rBareHour
	rRange
	rWindow
	rISODate
)

// tmatch is a validated match.
type tmatch struct {
	id          ruleID
	left, right int
	// fullL, fullR span the whole phrase the rule read, words outside
	// its captures included ("from", "o'clock"): the accounting rule.
	fullL, fullR int
	m            *rules.Match
	apply        applyFunc
}

// timeSpec collects what the matches of one cluster say.
type timeSpec struct {
	dateSet, yearSet bool
	y                int
	mo               time.Month
	d                int
	monthOnly        bool

	dayOffset    int
	dayOffsetSet bool
	explicitDay  bool // today / tonight / this morning: no rolling forward

	timeSet              bool
	hour, min            int
	sec                  int
	endSet               bool
	endH, endMin, endSec int
	rangeWritten         bool   // a bare end with minutes ("8:00 - 9:15")
	rangeBare            bool   // both ends bare hours ("from 10 till 4"): am/pm from the part of day or the order
	endOf                string // "end of" a day, week, month or year
	bareHour             int    // "at 9": am or pm unknown; -1 when none
	part                 string

	window    string // week, weekend, month, year
	windowOff int
	windowThe bool // "the month", not "this month": "the 1st of the month" is the next 1st

	rel                          bool
	relYears, relMonths, relDays int
	relDur                       time.Duration
	now                          bool
	question                     string
	invalid                      bool

	dayShift int // days added after the date is known ("a week from Monday")
	// todayNamed: a bare weekday naming today, put a week ahead; a time
	// (or part of day) still ahead today brings it back to today.
	todayNamed bool
	// rollWeek: a day counted back from a weekday ("3 days before
	// friday"); when it is past, the next such weekday's is meant.
	rollWeek     bool
	endDaySet    bool // a range of days ("between Monday and Wednesday")
	endDayOffset int

	dom int // a day of the month alone ("the 3rd")
	// weekdayNamed is a weekday the text named (time.Weekday+1; 0 none),
	// checked against a date given too ("Friday 14 March").
	weekdayNamed int
	sameTime     bool   // "same time", "this time": the reference's time of day
	firstThing   bool   // "first thing": the start of the part of day (the morning)
	twoTimes     bool   // two different times of day were given
	days         []int  // the days named, counted from today (nameDay)
	twoDays      bool   // two different days were named
	clockBare    bool   // "7:30" with no am/pm: a part of day may move it past noon
	repeat       string // an RRULE ("every weekday")
	nth          int    // the ordinal of "every second tuesday" (2), 0 when none
	byDay        []int  // the repeat's weekdays (time.Weekday), for the first occurrence
	nthDay       int    // "the second wednesday of every month": 2 (-1 last), 0 when none
	nthWd        time.Weekday
	vague        string     // "soonish", "later today", "sometime": asked unless a day says enough
	used         []byteSpan // text an apply function read outside its match (a year after a date)
}

var (
	reISOStamp   = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})(?:(?:T|\s*[|,;@]\s*|\s+(?:at\s+)?)(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(Z|\s?[+\-]\d{2}:?\d{2})?`)
	reYearAfter  = regexp.MustCompile(`^\s*,?\s*(\d{4})\b`)
	reGoodBefore = regexp.MustCompile(`(?i)\bgood\s*$`)
	reSlashCtx   = regexp.MustCompile(`(?i)\b(?:on|by|until|till|due|before|after|from|since)\s*$`)
	reMonthCtx   = regexp.MustCompile(`(?i)\b(?:in|by|until|till|next|this|early|late|mid|since|before|after|during|of)\s*-?\s*$`)
)

var fullWeekdays = map[string]bool{"sunday": true, "monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true}

// blankInvalidUTF8 turns each byte that is not valid UTF-8 (a cut or
// corrupt character) into a space, keeping every offset: glued to a word
// it would hide that word from the accounting ("\xce'until" is no word
// anyone can name), and a question must not quote it back.
func blankInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := []byte(s)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			b[i] = ' '
		}
		i += n
	}
	return string(b)
}

func parseAnchored(text, tz string, extraKnown []string, ref time.Time) ParseResult {
	return parseWith(text, tz, extraKnown, ref, false)
}

// parseWith is the parser; whole says the whole text is the expression
// (clock parse, the schedule tool): every time word anywhere must be read,
// and a text holding one is never a silent invalid. Otherwise (the
// envelope) only the words next to the phrase found count.
func parseWith(text, tz string, extraKnown []string, ref time.Time, whole bool) ParseResult {
	if len(text) > maxParseInput {
		text = text[:maxParseInput]
	}
	text = blankInvalidUTF8(text)
	var words normalized
	if whole {
		words = normalizeWords(text)
		text = words.text
	}
	p := &parser{text: text, ref: ref.Truncate(time.Second), whole: whole, words: words,
		used: make([]byteSpan, 0, 8), matches: make([]tmatch, 0, 8)}
	if tz != "" {
		loc, err := LoadTZ(tz)
		if err != nil {
			return ParseResult{Kind: KindInvalid, NeedsClarification: true,
				ClarificationQuestion: "Unknown timezone " + strconv.Quote(tz) + ": which IANA timezone do you mean (for example Europe/Berlin)?"}
		}
		p.anchor, p.anchorName = loc, tz
	}
	// The envelope skips text no rule can match; the whole text is always
	// read, so that its time words reach the accounting step.
	if strings.TrimSpace(text) == "" || !whole && !mayHaveTime(text) {
		return ParseResult{Kind: KindInvalid}
	}
	p.masked = []byte(text)
	p.readGreetings()
	res, cluster := p.read(append([]string{tz}, extraKnown...))
	res = p.account(inYearRange(res), cluster)
	res.read = p.text
	return res
}

// inYearRange turns a result outside years 1 to 9999 into an invalid one.
func inYearRange(r ParseResult) ParseResult {
	for _, t := range []*time.Time{r.Start, r.End} {
		if t != nil && (t.Year() < 1 || t.Year() > 9999) {
			return ParseResult{Kind: KindInvalid, Phrase: r.Phrase}
		}
	}
	return r
}

// mayHaveTime says whether the envelope should parse text: a digit, or
// the hint words of some rule (the same gate findMatches applies), so a
// form a rule reads is never skipped by a list kept apart from the rules
// ("ten to five" was).
func mayHaveTime(text string) bool {
	for i := 0; i < len(text); i++ {
		if isDigit(text[i]) {
			return true
		}
	}
	b := hints.scan(hintText(text), false)
	for i := range allRules {
		if hints.gate(i, &b, true) {
			return true
		}
	}
	return false
}

// byteSpan is a half-open byte range of the text a step consumed.
type byteSpan struct{ a, b int }

// parser holds one parse: the text, its masked copy (found pieces blanked
// so later steps do not see them again) and the spans each step consumed,
// which the accounting step checks the leftover words against.
type parser struct {
	text       string
	masked     []byte
	ref        time.Time
	anchor     *time.Location
	anchorName string
	whole      bool
	used       []byteSpan
	matches    []tmatch
	iso        *isoParts
	tzQuestion string
	zones      []byteSpan // the zone found and its repeats
	words      normalized // whole text: its assumptions, typo question and unknown words
}

func (p *parser) mask(a, b int) {
	for i := a; i < b && i < len(p.masked); i++ {
		if p.masked[i] < utf8.RuneSelf {
			p.masked[i] = ' '
		} else {
			p.masked[i] = '_'
		}
	}
}

func (p *parser) use(a, b int) {
	if a < b {
		p.used = append(p.used, byteSpan{a, b})
	}
}

// read runs the steps up to resolution: an ISO stamp, the zone, the rule
// table, the first cluster resolved. It returns the result and the
// cluster read (nil when none).
func (p *parser) read(known []string) (ParseResult, []tmatch) {
	if res, done := p.readISO(); done {
		return res, nil
	}
	p.readZone(known)
	p.findMatches()
	if len(p.matches) == 0 {
		if p.tzQuestion != "" {
			return ParseResult{Kind: KindInvalid, NeedsClarification: true, ClarificationQuestion: p.tzQuestion}, nil
		}
		return ParseResult{Kind: KindInvalid}, nil
	}
	cluster := firstCluster(p.matches, string(p.masked))
	return p.resolveCluster(cluster), cluster
}

// readISO finds an ISO-8601 stamp: with a time and an offset it is the
// whole answer (done); a date or a local stamp joins the matches.
func (p *parser) readISO() (ParseResult, bool) {
	if !hasDigitDashDigit(p.text) {
		return ParseResult{}, false // no "2027-03-03"
	}
	m := reISOStamp.FindStringSubmatchIndex(p.text)
	if m == nil {
		return ParseResult{}, false
	}
	iso, ok := readISO(p.text, m)
	if !ok {
		return ParseResult{Kind: KindInvalid, Phrase: p.text[m[0]:m[1]]}, true
	}
	p.use(m[0], m[1])
	if iso.hasOffset && iso.hasTime {
		inst := time.Date(iso.y, iso.mo, iso.d, iso.h, iso.mi, iso.s, 0, time.UTC).Add(-time.Duration(iso.off) * time.Minute)
		loc, name := p.anchor, p.anchorName
		if loc == nil {
			loc, name = time.FixedZone("", iso.off*60), FixedOffsetTZ(iso.off)
		}
		inst = inst.In(loc)
		return ParseResult{Kind: KindAbsolute, Start: &inst, Phrase: p.text[m[0]:m[1]], TZ: name}, true
	}
	p.iso = &iso
	p.matches = append(p.matches, tmatch{id: rISODate, left: m[0], right: m[1], fullL: m[0], fullR: m[1]})
	p.mask(m[0], m[1])
	return ParseResult{}, false
}

// hasDigitDashDigit says whether s holds a digit, "-", a digit.
func hasDigitDashDigit(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == '-' && isDigit(s[i-1]) && isDigit(s[i+1]) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// readZone finds a zone stated in the text (§4.2 step 1) and blanks it.
func (p *parser) readZone(knownIn []string) {
	known := knownZones(knownIn...)
	masked := string(p.masked)
	norm, regions := upperAbbrevAfterTime(masked)
	hit, found, q := findExplicitTZ(norm, known, p.ref)
	for _, r := range regions {
		if hit.Start == r.a {
			hit.End = r.b // "noon eastern time": the whole region phrase
		}
	}
	if !found && q == "" {
		hit, found = findZoneAfterTime(masked)
	}
	if !found && p.whole {
		hit, found, q = p.zoneWords(hit, q)
	}
	if found && hit.Abbrev != "" {
		q = abbrevSeasonQuestion(hit, p.ref)
	}
	if found || q != "" {
		p.zones = append(maskRepeats(p.masked, hit), byteSpan{hit.Start, hit.End})
		p.used = append(p.used, p.zones...)
		p.mask(hit.Start, hit.End)
	}
	if found {
		if loc, err := LoadTZ(hit.TZ); err == nil {
			p.anchor, p.anchorName = loc, hit.TZ
		}
	}
	p.tzQuestion = q
}

// findMatches runs the rule table on the masked text; each rule keeps its
// first valid match.
func (p *parser) findMatches() {
	ms := string(p.masked)
	lo := hintText(ms) // hints may ask for whole words (" at ")
	b := hints.scan(lo, strings.ContainsAny(ms, "0123456789"))
	noNeeds := strings.Contains(lo, "ſ")
	for i, pr := range allRules {
		if !hints.gate(i, &b, noNeeds) {
			continue
		}
		off := 0
		for tries := 0; tries < 8 && off < len(ms); tries++ {
			m, whole := findRule(pr.r, ms, off)
			if m == nil || m.Right <= m.Left {
				break
			}
			if validMatch(pr.id, m, ms) {
				l, r := fullSpan(whole, ms, m)
				p.matches = append(p.matches, tmatch{id: pr.id, left: m.Left, right: m.Right, fullL: l, fullR: r, m: m, apply: pr.apply})
				break
			}
			off = m.Right
		}
	}
}

// resolveCluster merges what the cluster's matches say and resolves it.
func (p *parser) resolveCluster(cluster []tmatch) ParseResult {
	sp, phrase, refL := p.readCluster(cluster)
	if sp.invalid {
		return ParseResult{Kind: KindInvalid, Phrase: phrase}
	}
	if q := vagueQuestion(&sp); q != "" {
		return ParseResult{Kind: KindInvalid, NeedsClarification: true, ClarificationQuestion: q, Phrase: phrase, TZ: p.anchorName}
	}
	// Relative: an amount from ref, needing no zone.
	if (sp.rel || sp.now) && !sp.timeSet && sp.part == "" && !sp.dateSet && !sp.dayOffsetSet && sp.window == "" && sp.bareHour < 0 {
		start := refL
		if sp.relYears != 0 || sp.relMonths != 0 || sp.relDays != 0 {
			start = AddCalendar(start, refL.Location(), sp.relYears, sp.relMonths, sp.relDays)
		}
		start = start.Add(sp.relDur)
		if sp.question != "" { // "in 20": how long is not said
			return ParseResult{Kind: KindRelative, NeedsClarification: true, ClarificationQuestion: sp.question, Phrase: phrase, TZ: p.anchorName}
		}
		return ParseResult{Kind: KindRelative, Start: &start, Phrase: phrase, TZ: p.anchorName, Repeat: sp.repeat}
	}
	if sp.rel && sp.relDays != 0 {
		sp.dayOffset += sp.relDays
		sp.dayOffsetSet = true
	}
	// Floating: a wall-clock expression with no zone (§4.3), or with an
	// abbreviation nothing known explains (§4.2: ask, never map silently).
	if p.anchor == nil || p.tzQuestion != "" {
		q := p.tzQuestion
		if q == "" {
			q = "Which timezone do you mean for " + strconv.Quote(phrase) + "? Please give a city or an IANA name such as Europe/Berlin."
		}
		return ParseResult{Kind: KindFloating, NeedsClarification: true, ClarificationQuestion: q, Phrase: phrase, Repeat: sp.repeat}
	}
	return p.resolveAnchored(&sp, phrase, refL)
}

// readCluster merges what the cluster's matches say into one spec; the
// phrase runs from the first match to the last (and a repeated zone).
func (p *parser) readCluster(cluster []tmatch) (timeSpec, string, time.Time) {
	a, b := cluster[0].left, cluster[len(cluster)-1].right
	for _, z := range p.zones {
		if z.a >= b && onlyGap(p.text[b:z.a]) {
			b = z.b // "14:00 UTC - 16:30 UTC": the repeat of the zone ends the phrase
		}
	}
	refLoc := p.ref.Location()
	if p.anchor != nil {
		refLoc = p.anchor
	}
	refL := p.ref.In(refLoc)
	sp := timeSpec{bareHour: -1}
	if iso := p.iso; iso != nil {
		sp.dateSet, sp.yearSet = true, true
		sp.y, sp.mo, sp.d = iso.y, iso.mo, iso.d
		if iso.hasTime {
			sp.timeSet, sp.hour, sp.min, sp.sec = true, iso.h, iso.mi, iso.s
		}
	}
	ms := string(p.masked)
	for _, tm := range cluster {
		p.use(tm.fullL, tm.fullR)
		if tm.apply != nil {
			tm.apply(&sp, ruleCtx{tm: tm, text: ms, refL: refL})
		}
	}
	p.used = append(p.used, sp.used...)
	settleDays(&sp)
	return sp, strings.TrimSpace(p.text[a:b]), refL
}

// resolveAnchored resolves a spec in the anchor zone: pieces that would
// drop one another ask; a repeat gets its first occurrence.
func (p *parser) resolveAnchored(sp *timeSpec, phrase string, refL time.Time) ParseResult {
	if sp.twoTimes || sp.timeSet && sp.bareHour >= 0 && sp.hour%12 != sp.bareHour%12 {
		// "noon at 3", "5pm at 6": a time and a bare hour that is not it.
		return ParseResult{Kind: KindAbsolute, NeedsClarification: true, Phrase: phrase,
			ClarificationQuestion: "I read two times in " + strconv.Quote(phrase) + ": which one do you mean?"}
	}
	if sp.twoDays {
		return ParseResult{Kind: KindAbsolute, NeedsClarification: true, Phrase: phrase,
			ClarificationQuestion: "I read two days in " + strconv.Quote(phrase) + ": which one do you mean?"}
	}
	if q := combineWindow(sp, refL); q != "" {
		return ParseResult{Kind: KindAbsolute, NeedsClarification: true, ClarificationQuestion: q, Phrase: phrase}
	}
	if sp.repeat != "" && !sp.timeSet && sp.bareHour < 0 && !sp.dateSet && !sp.dayOffsetSet && sp.part == "" && sp.endOf == "" {
		sp.dayOffsetSet = true // "every monday": from today
	}
	res := resolveSpec(sp, refL, p.anchor)
	res.Phrase, res.TZ = phrase, p.anchorName
	if res.Start != nil && sp.repeat != "" {
		res.Repeat = sp.repeat
		if sp.dom > 0 && strings.HasPrefix(sp.repeat, "FREQ=MONTHLY") {
			res.Repeat += ";BYMONTHDAY=" + strconv.Itoa(sp.dom)
		}
		firstOccurrence(&res, sp, p.anchor)
	}
	if res.NeedsClarification {
		// Ambiguous (11/3, "at 9"): no concrete time is claimed (§4.3).
		res.Start, res.End = nil, nil
	}
	return res
}

type isoParts struct {
	y, d, h, mi, s, off int
	mo                  time.Month
	hasTime, hasOffset  bool
}

func readISO(text string, m []int) (isoParts, bool) {
	num := func(i int) int {
		if m[2*i] < 0 {
			return 0
		}
		n, _ := strconv.Atoi(text[m[2*i]:m[2*i+1]])
		return n
	}
	p := isoParts{y: num(1), mo: time.Month(num(2)), d: num(3), h: num(4), mi: num(5), s: num(6)}
	p.hasTime = m[8] >= 0
	if m[14] >= 0 {
		p.hasOffset = true
		o := strings.TrimSpace(text[m[14]:m[15]])
		if o != "Z" {
			mins, ok := parseOffsetLabel(o)
			if !ok {
				return p, false
			}
			p.off = mins
		}
	}
	if p.mo < 1 || p.mo > 12 || p.d < 1 || p.d > daysIn(p.y, p.mo) || p.h > 23 || p.mi > 59 || p.s > 59 {
		return p, false
	}
	return p, true
}

var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
	"twenty five": 25, "twenty-five": 25, "thirty": 30, "forty": 40, "forty five": 45, "forty-five": 45, "fifty": 50, "ninety": 90}

func hour12(h int, suffix string) (int, bool) {
	if h < 0 || h > 12 {
		return 0, false
	}
	switch strings.ToLower(suffix)[0] {
	case 'a':
		if h == 12 {
			return 0, true
		}
		return h, true
	case 'p':
		if h < 12 {
			return h + 12, true
		}
		return 12, true
	}
	return 0, false
}

func windowRange(sp *timeSpec, refL time.Time, loc *time.Location, res *ParseResult) ParseResult {
	ty, tmo, td := refL.Date()
	var s, e time.Time
	switch sp.window {
	case "week", "weekend":
		wd := (int(refL.Weekday()) + 6) % 7 // Monday = 0
		monday := td - wd + 7*sp.windowOff
		if sp.window == "week" {
			s, _ = ResolveLocal(loc, ty, tmo, monday, 0, 0, 0)
			e, _ = ResolveLocal(loc, ty, tmo, monday+7, 0, 0, 0)
		} else {
			s, _ = ResolveLocal(loc, ty, tmo, monday+5, 0, 0, 0)
			e, _ = ResolveLocal(loc, ty, tmo, monday+7, 0, 0, 0)
		}
	case "month":
		s, _ = ResolveLocal(loc, ty, tmo+time.Month(sp.windowOff), 1, 0, 0, 0)
		e, _ = ResolveLocal(loc, ty, tmo+time.Month(sp.windowOff)+1, 1, 0, 0, 0)
	case "year":
		s, _ = ResolveLocal(loc, ty+sp.windowOff, time.January, 1, 0, 0, 0)
		e, _ = ResolveLocal(loc, ty+sp.windowOff+1, time.January, 1, 0, 0, 0)
	default:
		return ParseResult{Kind: KindInvalid}
	}
	res.Start, res.End, res.DayOnly = &s, &e, true
	return *res
}
