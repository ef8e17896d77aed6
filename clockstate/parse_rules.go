package clockstate

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olebedev/when/rules"
	"github.com/olebedev/when/rules/en"
)

// The parser is a table of small rules (doc/design.md "Time parser"):
// each rule finds one kind of piece in the text (a date, a time of day, a
// duration, a relative day, a weekday, a range) and its apply function
// writes what the piece says into a timeSpec. Matches joined only by
// connector words form one cluster (the refinement step: a date merges
// with a following time, a time with a following zone, two times into a
// range); resolveSpec turns the merged spec into instants with
// ResolveLocal. Adding a form is one entry here and one test line in
// testdata/corpus.tsv.

// applyFunc writes what one match says into the spec.
type applyFunc func(sp *timeSpec, x ruleCtx)

// ruleCtx is one match seen by its apply function.
type ruleCtx struct {
	tm   tmatch
	text string    // the masked text the match was found in
	refL time.Time // the reference instant in the anchor zone
}

func (x ruleCtx) capt(i int) string {
	if i < len(x.tm.m.Captures) {
		return strings.TrimSpace(x.tm.m.Captures[i])
	}
	return ""
}

func (x ruleCtx) atoi(i int) int {
	n, _ := strconv.Atoi(x.capt(i))
	return n
}

const (
	rTimeSec ruleID = iota + 100
	rQuarter
	rRelDay2
	rWeekdayOfWeek
	rDuration
	rShiftFrom
	rDayRange
	rDateYear
	rRange24
	rSlashYear
	rDotDate
	rYMDSlash
	rWeekdayAbbr
	rDashDate
)

// spanRule is a rule whose regexp's group 1 is the phrase; the groups
// after it are the captures (the surrounding boundary stays outside).
// The regexp is compiled when the rule first runs: a rule runs only when
// the text holds one of its triggers, and most texts never wake most
// rules (compiling all of them at start-up allocated 1.6 MB and kept
// 0.5 MB; doc/benchmarks.md, "Memory (issue 36)").
type spanRule struct{ *lazy[*regexp.Regexp] }

// lazy is a value made at its first use: the parser's regexps.
type lazy[T any] struct {
	mk   func() T
	once sync.Once
	v    T
	made bool // get has run (the tests look)
}

func (l *lazy[T]) get() T {
	l.once.Do(func() { l.v, l.made = l.mk(), true })
	return l.v
}

func (s spanRule) Find(text string) *rules.Match {
	ix := s.get().FindStringSubmatchIndex(text)
	if ix == nil || ix[2] < 0 {
		return nil
	}
	m := &rules.Match{Left: ix[2], Right: ix[3], Text: text[ix[2]:ix[3]], Captures: make([]string, 0, (len(ix)-4)/2)}
	for i := 4; i < len(ix); i += 2 {
		if ix[i] >= 0 {
			m.Captures = append(m.Captures, text[ix[i]:ix[i+1]])
		} else {
			m.Captures = append(m.Captures, "")
		}
	}
	return m
}

func span(expr string) spanRule {
	expr = strings.NewReplacer("WEEKDAY", reWeekdayWord, "MONTH", reMonthWord, "NUM", reNumWord, "AMPM", `(?:am|pm|a\.m\.|p\.m\.)`).Replace(expr)
	return lazySpan(`(?i)(?:\W|^)(` + expr + `)(?:\W|$)`)
}

// lazyRule is an olebedev/when rule (a *rules.F) made at its first use:
// building one compiles its regexp.
type lazyRule struct{ *lazy[*rules.F] }

func (l lazyRule) Find(text string) *rules.Match { return l.get().Find(text) }

// whenRule is the olebedev/when rule mk makes, with its matches
// overriding earlier ones, made at first use.
func whenRule(mk func(rules.Strategy) rules.Rule) lazyRule {
	return lazyRule{&lazy[*rules.F]{mk: func() *rules.F { return mk(rules.Override).(*rules.F) }}}
}

// whenExpr is a rules.F on expr, compiled at first use.
func whenExpr(expr string) lazyRule {
	return lazyRule{&lazy[*rules.F]{mk: func() *rules.F { return &rules.F{RegExp: regexp.MustCompile(expr)} }}}
}

// lazySpan is the span rule of a whole expression, compiled at first use.
func lazySpan(expr string) spanRule {
	return spanRule{&lazy[*regexp.Regexp]{mk: func() *regexp.Regexp { return regexp.MustCompile(expr) }}}
}

const (
	reWeekdayWord = `(?:mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)`
	reMonthWord   = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`
	reNumWord     = `(?:(?:\d+(?:\.\d+)?\s*|(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty(?:[\s-]five)?|thirty|forty(?:[\s-]five)?|fifty|ninety|half\s+an?|a\s+quarter\s+of\s+an?|three[\s-]+quarters\s+of\s+an?|a\s+few|a\s+couple(?:\s+of)?)\s+)(?:and\s+a\s+half\s+)?)`
	reUnitWord    = `(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|fortnights?|months?|years?|yrs?|h|m|s|d|w)`
)

// allRules is the rule table. The olebedev/when rules find the common
// English forms; the span rules cover what it lacks.
var allRules = append(append(append(append(append(vagueRules, monthlyRules...), chatRules...), typedRules...), formRules...), []ruleRow{
	{rTimeSec, span(`(\d{1,2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:\s*(AMPM))?`), applyTimeSec, []string{":"}},
	{rQuarter, span(`((?:a\s+)?quarter|half|(?:five|ten|twenty|twenty[\s-]five)(?:\s+minutes?)?|(?:(?:twenty[\s-])?(?:one|two|three|four|six|seven|eight|nine)|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)\s+minutes?|\d{1,2}(?:\s+minutes?)?)\s+(past|after|to|before|till|of)\s+(\d{1,2}|noon|midnight|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?:\s*(AMPM))?`), applyQuarter, []string{"past", "after", " to ", "before", "till", " of "}},
	{rRelDay2, span(`(?:the\s+)?day\s+(after|before)\s+(tomorrow|tmrw|tmr|yesterday)`), applyRelDay2, []string{"day"}},
	{rWeekdayOfWeek, span(`(WEEKDAY)\s+(?:of\s+|in\s+)?(next|this|last)\s+(?:week|wk)|(next|this|last)\s+(?:week|wk)(?:'s)?\s+(?:on\s+)?(WEEKDAY)`), applyWeekdayOfWeek, []string{"week", "wk"}},
	{rDayRange, span(`(?:from|between)\s+(WEEKDAY)\s+(?:and|to|till|until|through|-)\s+(WEEKDAY)`), applyDayRange, []string{"from", "between"}},
	{rDateYear, span(`(?:WEEKDAY,?\s+)?(MONTH)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})|(?:WEEKDAY,?\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(MONTH)\.?,?\s+(\d{4})`), applyDateYear, []string{"#", "&", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{rShiftFrom, lazySpan(`(?i)(?:\W|^)((` + reNumWord + `)(days?|weeks?)\s+(?:from|after))\s+(?:next\s+|this\s+|on\s+)?(?:` + reWeekdayWord + `|tomorrow|today)\b`), applyShiftFrom, []string{"from", "after"}},
	{rDuration, span(`(?:(in|within|after)\s+(?:about\s+|around\s+|approx(?:imately)?\s+|roughly\s+|like\s+|another\s+|just\s+)?)?(NUM` + reUnitWord + `\b(?:\s+and\s+a\s+(?:half|quarter)\b)?(?:\s*(?:,|and)?\s*NUM` + reUnitWord + `\b(?:\s+and\s+a\s+(?:half|quarter)\b)?)*)(?:\s+(ago|from\s+now|later|hence|earlier|before\s+now))?`), applyDuration, []string{"#", "a ", "an ", "half", "few", "couple", "teen", "twenty", "thirty", "forty", "fifty", "ninety", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "&", "sec", "mins", "minute", "#min", "# min", "hour", "hrs", "#hr", "# hr", " hr", "days", "a day", "one day", "# day", "#day", "week", "wk", "fortnight", "month", "year", "yr", "#h", "#m", "#s", "#d", "#w", "# h", "# m", "# s", "# d", "# w"}},
	{rWeekday, whenRule(en.Weekday), applyWeekday, []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}},
	{rCasualDate, whenRule(en.CasualDate), applyCasualDate, []string{"now", "tod", "tonight", "tom", "tmr", "yesterday", "night"}},
	{rCasualTime, whenRule(en.CasualTime), applyCasualTime, []string{"morning", "afternoon", "evening", "night", "noon"}},
	{rHour, whenRule(en.Hour), applyHour, []string{"#", "&", "am", "pm", "a.", "p.", "#a", "#p"}},
	{rHourMinute, whenRule(en.HourMinute), applyHourMinute, []string{"#", "&", ":", "-", "："}},
	{rDeadline, whenRule(en.Deadline), applyAmount, []string{"in", "within"}},
	{rPastTime, whenRule(en.PastTime), applyAmount, []string{"ago"}},
	{rMonthDate, whenRule(en.ExactMonthDate), applyMonthDate, []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{rDotDate, span(`(\d{1,2})\.(\d{1,2})\.(\d{4})`), applyDotDate, []string{"#."}},
	{rYMDSlash, span(`(\d{4})/(\d{1,2})/(\d{1,2})`), applyYMDSlash, []string{"#/"}},
	{rWeekdayAbbr, span(`(tues|thurs|weds)\.?`), applyWeekdayAbbr, []string{"tues", "thurs", "weds"}},
	{rDashDate, span(`(\d{1,2})-(\d{1,2})-(\d{4})`), applySlashDate, []string{"#-"}},
	{rSlashYear, span(`(\d{1,2})/(\d{1,2})/(\d{4})`), applySlashDate, []string{"#/"}},
	{rFromNow, whenExpr(`(?i)(?:\W|^)(an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+|a\s+few|a\s+couple(?:\s+of)?|half\s+an?)\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\s+(from\s+now|later|hence)(?:\W|$)`), applyAmount, []string{"from", "later", "hence"}},
	{rCompactIn, whenExpr(`(?i)(?:\W|^)(in|within)\s+(\d{1,4}|a\s+couple(?:\s+of)?)\s*(s|m|h|d|w|hr|hrs|min|mins|sec|secs|wk|wks|yr|yrs|seconds?|minutes?|hours?|days?|weeks?|months?|years?)(?:\W|$)`), applyCompactIn, []string{"in"}},
	{rMidnight, whenExpr(`(?i)(?:\W|^)(midnight|midday)(?:\W|$)`), applyMidnight, []string{"mid"}},
	{rWindow, whenExpr(`(?i)(?:\W|^)(this|next|last|the)\s+(week|wk|weekend|month|year|yr)(?:\W|$)`), applyWindow, []string{"week", "wk", "month", "year", "yr"}},
}...)

// ---- durations ----

// amountF reads "2", "2.5", "two", "a", "a few", "a couple of", "half an".
func amountF(s string) (float64, bool) {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	half := 0.0
	if t, ok := strings.CutSuffix(s, " and a half"); ok {
		s, half = t, 0.5
	}
	switch {
	case strings.HasPrefix(s, "three quarters"), strings.HasPrefix(s, "three-quarters"):
		return 0.75, true
	case strings.HasPrefix(s, "a quarter"):
		return 0.25, true
	case strings.HasPrefix(s, "half"):
		return 0.5, true
	case strings.Contains(s, "few"):
		return 3, true
	case strings.Contains(s, "couple"):
		return 2, true
	}
	if n, ok := numberWords[s]; ok {
		return float64(n) + half, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 100000 {
		return 0, false
	}
	return f + half, true
}

// addRelF adds amount×unit (sign -1 for "ago"): calendar units whole in
// the calendar, their fractions as elapsed time.
func addRelF(sp *timeSpec, amt float64, unit string, sign int) bool {
	u := strings.ToLower(strings.TrimSpace(unit))
	whole := int(amt)
	frac := amt - float64(whole)
	dur := func(d time.Duration) { sp.relDur += time.Duration(float64(sign) * amt * float64(d)) }
	sp.rel = true
	switch {
	case strings.HasPrefix(u, "s"):
		dur(time.Second)
	case strings.HasPrefix(u, "mo"):
		sp.relMonths += sign * whole
		sp.relDays += sign * int(frac*30+0.5)
	case strings.HasPrefix(u, "m"):
		dur(time.Minute)
	case strings.HasPrefix(u, "h"):
		dur(time.Hour)
	case strings.HasPrefix(u, "d"):
		sp.relDays += sign * whole
		sp.relDur += time.Duration(float64(sign) * frac * float64(24*time.Hour))
	case strings.HasPrefix(u, "f"):
		days := amt * 14
		sp.relDays += sign * int(days)
		sp.relDur += time.Duration(float64(sign) * (days - float64(int(days))) * float64(24*time.Hour))
	case strings.HasPrefix(u, "w"):
		days := amt * 7
		sp.relDays += sign * int(days)
		sp.relDur += time.Duration(float64(sign) * (days - float64(int(days))) * float64(24*time.Hour))
	case strings.HasPrefix(u, "y"):
		months := amt * 12
		sp.relYears += sign * (int(months) / 12)
		sp.relMonths += sign * (int(months) % 12)
	default:
		return false
	}
	return true
}

var reDurPart = regexp.MustCompile(`(?i)(` + reNumWord + `)(` + reUnitWord + `)\b(?:\s+and\s+a\s+(half|quarter)\b)?`)

// applyDuration: "in 2.5 hours", "in 2 hours 30 minutes", "1.5 days ago".
func applyDuration(sp *timeSpec, x ruleCtx) {
	sign := 1
	if strings.HasPrefix(strings.ToLower(x.capt(2)), "ago") || strings.HasPrefix(strings.ToLower(x.capt(2)), "earlier") || strings.HasPrefix(strings.ToLower(x.capt(2)), "before") {
		sign = -1
	}
	for _, p := range reDurPart.FindAllStringSubmatch(x.capt(1), -1) {
		amt, ok := amountF(p[1])
		switch strings.ToLower(p[3]) {
		case "half":
			amt += 0.5
		case "quarter":
			amt += 0.25
		}
		if !ok || !addRelF(sp, amt, p[2], sign) {
			sp.invalid = true
			return
		}
		vagueAmount(sp, p[1], p[2], x.refL)
	}
}

// applyAmount: when's Deadline ("within 2 days"), PastTime ("3 days ago")
// and "N units from now".
func applyAmount(sp *timeSpec, x ruleCtx) {
	num, unit, sign := x.capt(1), x.capt(2), 1
	switch x.tm.id {
	case rPastTime:
		num, unit, sign = x.capt(0), x.capt(1), -1
	case rFromNow:
		num, unit = x.capt(0), x.capt(1)
	}
	amt, ok := amountF(num)
	if !ok || !addRelF(sp, amt, unit, sign) {
		sp.invalid = true
	}
	vagueAmount(sp, num, unit, x.refL)
}

func applyCompactIn(sp *timeSpec, x ruleCtx) {
	amt, ok := amountF(x.capt(1))
	if !ok || !addRelF(sp, amt, x.capt(2), 1) {
		sp.invalid = true
	}
	vagueAmount(sp, x.capt(1), x.capt(2), x.refL)
}

// applyShiftFrom: "a week from Monday", "2 days after tomorrow".
func applyShiftFrom(sp *timeSpec, x ruleCtx) {
	amt, ok := amountF(x.capt(0))
	if !ok || amt != float64(int(amt)) {
		sp.invalid = true
		return
	}
	n := int(amt)
	if strings.HasPrefix(strings.ToLower(x.capt(1)), "w") {
		n *= 7
	}
	sp.dayShift += n
}

// ---- days ----

func weekdayIndex(s string) time.Weekday {
	switch strings.ToLower(s)[:2] {
	case "mo":
		return time.Monday
	case "tu":
		return time.Tuesday
	case "we":
		return time.Wednesday
	case "th":
		return time.Thursday
	case "fr":
		return time.Friday
	case "sa":
		return time.Saturday
	}
	return time.Sunday
}

func applyWeekday(sp *timeSpec, x ruleCtx) {
	c := &rules.Context{}
	if ok, err := x.tm.m.Apply(c, &rules.Options{}, x.refL); err != nil || !ok {
		sp.invalid = true
		return
	}
	off := int(c.Duration / (24 * time.Hour))
	if off < 0 && strings.EqualFold(strings.TrimSpace(x.capt(0)), "this") {
		off += 7 // "this sunday" said on a Wednesday: the coming one, not the past one
	}
	nameDay(sp, off)
	sp.todayNamed = sp.todayNamed || off == 7 && x.capt(0) == "" && !reComingBefore.MatchString(x.text[:x.tm.left])
	if len(x.tm.m.Captures) > 1 && x.tm.m.Captures[1] != "" {
		sp.weekdayNamed = int(weekdayIndex(x.tm.m.Captures[1])) + 1
	}
}

// applyWeekdayOfWeek: "Tuesday of next week", "next week Tuesday".
func applyWeekdayOfWeek(sp *timeSpec, x ruleCtx) {
	day, which := x.capt(0), x.capt(1)
	if day == "" {
		which, day = x.capt(2), x.capt(3)
	}
	off := 0
	switch strings.ToLower(which) {
	case "next":
		off = 7
	case "last":
		off = -7
	}
	monday := -((int(x.refL.Weekday()) + 6) % 7)
	nameDay(sp, monday+off+(int(weekdayIndex(day))+6)%7)
	sp.explicitDay = true
}

// applyDayRange: "between Monday and Wednesday": the whole days.
func applyDayRange(sp *timeSpec, x ruleCtx) {
	today := int(x.refL.Weekday())
	a := (int(weekdayIndex(x.capt(0))) - today + 7) % 7
	b := (int(weekdayIndex(x.capt(1))) - today + 7) % 7
	if b < a {
		b += 7
	}
	sp.dayOffset, sp.dayOffsetSet, sp.explicitDay = a, true, true
	sp.endDaySet, sp.endDayOffset = true, b
}

func applyRelDay2(sp *timeSpec, x ruleCtx) {
	if strings.EqualFold(x.capt(0), "after") == !strings.EqualFold(x.capt(1), "yesterday") {
		n := 2
		if !strings.EqualFold(x.capt(0), "after") {
			n = -2
		}
		nameDay(sp, n)
		sp.explicitDay = true
		return
	}
	nameDay(sp, 0) // "the day after yesterday": today
	sp.explicitDay = true
}

func applyCasualDate(sp *timeSpec, x ruleCtx) {
	switch w := strings.Join(strings.Fields(strings.ToLower(x.capt(0))), " "); w {
	case "now":
		sp.now = true
	case "today":
		nameDay(sp, 0)
		sp.explicitDay = true
	case "tonight":
		nameDay(sp, 0)
		sp.explicitDay, sp.part = true, "tonight"
	case "tomorrow", "tmr":
		nameDay(sp, 1)
	case "yesterday":
		nameDay(sp, -1)
	case "last night", "lastnight":
		nameDay(sp, -1)
		sp.explicitDay = true
		sp.part = "tonight"
	}
}

func applyWindow(sp *timeSpec, x ruleCtx) {
	switch strings.ToLower(x.capt(0)) {
	case "next":
		sp.windowOff = 1
	case "last":
		sp.windowOff = -1
	case "the":
		sp.windowThe = true
	}
	sp.window = strings.ToLower(x.capt(1))
	switch sp.window {
	case "wk":
		sp.window = "week"
	case "yr":
		sp.window = "year"
	}
}

// ---- dates ----

func monthOf(s string) time.Month {
	mon := strings.TrimSuffix(strings.ToLower(s), ".")
	mo := en.MONTH_OFFSET[mon]
	if mo == 0 {
		mo = en.MONTH_OFFSET[mon+"."]
	}
	return time.Month(mo)
}

func applyMonthDate(sp *timeSpec, x ruleCtx) {
	mo := monthOf(x.capt(2))
	if mo == 0 {
		sp.invalid = true
		return
	}
	day := 0
	for _, c := range []string{x.capt(0), x.capt(3)} {
		if c != "" {
			day = en.ORDINAL_WORDS[strings.TrimSuffix(strings.Join(strings.Fields(strings.ToLower(c)), " "), " of")]
		}
	}
	for _, i := range []int{1, 4} {
		if x.capt(i) != "" {
			day = x.atoi(i)
		}
	}
	sp.dateSet, sp.mo = true, mo
	if day == 0 {
		sp.monthOnly, sp.d = true, 1
	} else {
		sp.d = day
	}
	if y := reYearAfter.FindStringSubmatchIndex(x.text[x.tm.right:]); y != nil {
		sp.y, _ = strconv.Atoi(x.text[x.tm.right+y[2] : x.tm.right+y[3]])
		sp.yearSet = true
		sp.used = append(sp.used, byteSpan{x.tm.right, x.tm.right + y[1]})
	}
}

// applyDateYear: "June 3rd 2027", "tuesday, march 9, 2021", "3 June 2027".
func applyDateYear(sp *timeSpec, x ruleCtx) {
	mo, d, y := monthOf(x.capt(0)), x.atoi(1), x.atoi(2)
	if x.capt(0) == "" {
		mo, d, y = monthOf(x.capt(4)), x.atoi(3), x.atoi(5)
	}
	if mo == 0 || d < 1 || d > daysIn(y, mo) {
		sp.invalid = true
		return
	}
	sp.dateSet, sp.yearSet = true, true
	sp.y, sp.mo, sp.d = y, mo, d
	if wd := reLeadWeekday.FindString(x.tm.m.Text); wd != "" {
		sp.weekdayNamed = int(weekdayIndex(wd)) + 1 // checked against the date
	}
}

// reComingBefore: "this coming Wednesday" said on a Wednesday is next week's.
var reComingBefore = regexp.MustCompile(`(?i)\bcoming\s*$`)

var reLeadWeekday = regexp.MustCompile(`(?i)^` + reWeekdayWord + `\b`)

// dayFirstZone says how a zone's users write a/b dates: 1 day first
// (Europe, Australia, most of the world), -1 month first (the United
// States), 0 unknown (UTC, fixed offsets, Canada…): ask.
func dayFirstZone(tz string) int {
	switch {
	case tz == "" || tz == "UTC" || strings.HasPrefix(tz, "Etc/") || strings.HasPrefix(tz, "UTC"):
		return 0
	case usZones[tz] || strings.HasPrefix(tz, "America/Indiana/") || strings.HasPrefix(tz, "America/Kentucky/") || strings.HasPrefix(tz, "America/North_Dakota/"):
		return -1
	case strings.HasPrefix(tz, "Europe/"), strings.HasPrefix(tz, "Australia/"), strings.HasPrefix(tz, "Africa/"),
		tz == "Pacific/Auckland", tz == "Asia/Kolkata", tz == "Asia/Calcutta", tz == "Asia/Singapore", tz == "Asia/Hong_Kong",
		tz == "America/Sao_Paulo", tz == "America/Argentina/Buenos_Aires", tz == "America/Mexico_City", tz == "America/Bogota",
		tz == "America/Lima", tz == "America/Santiago", tz == "Asia/Jerusalem", tz == "Asia/Dubai", tz == "Asia/Jakarta":
		return 1
	}
	return 0
}

var usZones = map[string]bool{"America/New_York": true, "America/Chicago": true, "America/Denver": true, "America/Los_Angeles": true,
	"America/Phoenix": true, "America/Anchorage": true, "America/Detroit": true, "America/Boise": true, "America/Juneau": true,
	"America/Adak": true, "America/Menominee": true, "Pacific/Honolulu": true, "US/Eastern": true, "US/Central": true,
	"US/Mountain": true, "US/Pacific": true}

func applySlashDate(sp *timeSpec, x ruleCtx) {
	a, b := x.atoi(0), x.atoi(1)
	switch {
	case a > 12:
		sp.d, sp.mo = a, time.Month(b)
	case b > 12:
		sp.d, sp.mo = b, time.Month(a)
	case a == b:
		sp.d, sp.mo = a, time.Month(a)
	default:
		switch dayFirstZone(x.refL.Location().String()) {
		case 1:
			sp.d, sp.mo = a, time.Month(b)
		case -1:
			sp.d, sp.mo = b, time.Month(a)
		default:
			sp.d, sp.mo = a, time.Month(b)
			sp.question = "Do you mean " + strconv.Itoa(a) + " " + time.Month(b).String() + " or " +
				strconv.Itoa(b) + " " + time.Month(a).String() + "?"
		}
	}
	if sp.mo < 1 || sp.mo > 12 {
		sp.invalid = true
		return
	}
	sp.dateSet = true
	if x.capt(2) != "" {
		sp.y = x.atoi(2)
		sp.yearSet = true
	}
}

// ---- times of day ----

func setTime(sp *timeSpec, h, m, s int) {
	if h > 24 || m > 59 || s > 59 || (h == 24 && (m > 0 || s > 0)) {
		sp.invalid = true
		return
	}
	if sp.timeSet && (sp.hour != h || sp.min != m || sp.sec != s) {
		sp.twoTimes = true // "15.08 at 10 am": which one?
	}
	if sp.bareHour >= 0 && (sp.bareHour%12 != h%12 || sp.min != m) {
		sp.twoTimes = true // "quarter past 3 at 15:20"
	}
	sp.timeSet, sp.hour, sp.min, sp.sec = true, h, m, s
}

// nameDay records a day the text names counting from today ("tomorrow",
// "Friday", "the day after tomorrow"); settleDays reads them together.
func nameDay(sp *timeSpec, off int) {
	sp.days = append(sp.days, off)
	sp.dayOffsetSet = true
}

// settleDays: names of one day agree ("tomorrow, Friday" said on a
// Thursday; "today, Thursday" said on one, where the bare weekday alone
// would be a week on); names of different days are two days, asked about,
// never added up ("tomorrow at 9am on Friday" was the Saturday after).
func settleDays(sp *timeSpec) {
	if len(sp.days) == 0 {
		return
	}
	first := slices.Min(sp.days)
	for _, d := range sp.days {
		if d != first && !(first == 0 && d == 7 && sp.todayNamed) {
			sp.twoDays = true
		}
	}
	sp.dayOffset += first
}

// setBare records an hour whose am or pm is unknown ("at 9", "half past
// 2", "9.45"), with its minutes. Another time that is not the same one,
// bare ("half past 2 at 9") or not, makes two times: asked, never one
// silently dropped.
func setBare(sp *timeSpec, h, m int) {
	if sp.bareHour >= 0 && (sp.bareHour != h || sp.min != m) {
		sp.twoTimes = true
	}
	if sp.timeSet && (sp.hour%12 != h%12 || sp.min != m) {
		sp.twoTimes = true
	}
	sp.bareHour, sp.min = h, m
}

// setTime12 sets a 12-hour clock time ("7:30 pm"); an hour the suffix
// cannot carry ("13 pm") marks the spec invalid.
func setTime12(sp *timeSpec, h int, suffix string, m, s int) {
	hh, ok := hour12(h, suffix)
	if !ok {
		sp.invalid = true
		return
	}
	setTime(sp, hh, m, s)
}

func applyHour(sp *timeSpec, x ruleCtx) {
	setTime12(sp, x.atoi(0), x.capt(1), 0, 0)
}

func applyHourMinute(sp *timeSpec, x ruleCtx) {
	h := x.atoi(0)
	if x.capt(2) != "" {
		hh, ok := hour12(h, x.capt(2))
		if !ok {
			sp.invalid = true
			return
		}
		h = hh
	}
	if h > 23 {
		sp.invalid = true
		return
	}
	setTime(sp, h, x.atoi(1), 0)
	sp.clockBare = x.capt(2) == "" && h >= 1 && h <= 11 && !strings.HasPrefix(x.capt(0), "0")
}

// applyTimeSec: "07:05:59", "18:00:00", "1:02:03 pm".
func applyTimeSec(sp *timeSpec, x ruleCtx) {
	h := x.atoi(0)
	if x.capt(3) != "" {
		hh, ok := hour12(h, x.capt(3))
		if !ok {
			sp.invalid = true
			return
		}
		h = hh
	}
	if h > 23 {
		sp.invalid = true
		return
	}
	setTime(sp, h, x.atoi(1), x.atoi(2))
	sp.clockBare = x.capt(3) == "" && h >= 1 && h <= 11 && !strings.HasPrefix(x.capt(0), "0")
}

func applyCasualTime(sp *timeSpec, x ruleCtx) {
	part := strings.ToLower(x.capt(2))
	if x.capt(1) != "" {
		nameDay(sp, 0)
		sp.explicitDay = true
	}
	if part == "noon" {
		setTime(sp, 12, 0, 0)
		return
	}
	sp.part = part
}

func applyMidnight(sp *timeSpec, x ruleCtx) {
	if strings.EqualFold(x.capt(0), "midday") {
		setTime(sp, 12, 0, 0)
	} else {
		setTime(sp, 24, 0, 0)
	}
}

// ---- ranges ----

// applyDotDate: "31.12.2026" is day first wherever dots are written.
func applyDotDate(sp *timeSpec, x ruleCtx) { setYMD(sp, x.atoi(2), time.Month(x.atoi(1)), x.atoi(0)) }

// applyYMDSlash: "2026/12/31".
func applyYMDSlash(sp *timeSpec, x ruleCtx) { setYMD(sp, x.atoi(0), time.Month(x.atoi(1)), x.atoi(2)) }

func setYMD(sp *timeSpec, y int, mo time.Month, d int) {
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		sp.invalid = true
		return
	}
	sp.dateSet, sp.yearSet = true, true
	sp.y, sp.mo, sp.d = y, mo, d
}

// applyWeekdayAbbr: "Tues", "Thurs", "Weds" (the abbreviations
// olebedev/when lacks): the next such day after today.
func applyWeekdayAbbr(sp *timeSpec, x ruleCtx) {
	ahead := (int(weekdayIndex(x.capt(0))) - int(x.refL.Weekday()) + 7) % 7
	if ahead == 0 {
		ahead = 7
		sp.todayNamed = !reComingBefore.MatchString(x.text[:x.tm.left])
	}
	nameDay(sp, ahead)
	sp.weekdayNamed = int(weekdayIndex(x.capt(0))) + 1
}
