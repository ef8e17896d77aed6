package clockstate

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/olebedev/when/rules"
)

// The forms of chat (issue 21): a day of the month alone, day/month
// without a year, "half nine", dotted times, ranges of bare hours and
// words, parts of day that settle a bare hour, compound durations, "end
// of", "same time", "the Thursday after next", "a week on Tuesday",
// "17h30", "in 1h30m", recurrences.

const (
	rDayOfMonth ruleID = iota + 200
	rSlashAny
	rHalfHour
	rDotTime
	rRangeAny
	rBareHourWord
	rPartWord
	rEndOf
	rSameTime
	rAfterNext
	rHourH
	rCompactHM
	rMonthYear
	rRepeat
	rShiftOn
	rTmrw
	rHourBeforePart
	rTonite
	rTwelveNoon
	rDayWeek
	rInBare
)

const reClockT = `(?:\d{1,2}(?:[:.]\d{2}(?::\d{2})?)?(?:\s*(?:am|pm|a\.m\.|p\.m\.))?|noon|midday|midnight)`

const reHourWord = `(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`

var chatRules = []ruleRow{
	{rRepeat, span(`(?:(every|each)\s+(other\s+|second\s+|2nd\s+|third\s+|3rd\s+|fourth\s+|4th\s+)?(weekday|working\s+day|weekend|day|week|wk|month|year|morning|afternoon|evening|night|(?:WEEKDAY)\s*(?:-|–|to|through|thru|till|until)\s*(?:WEEKDAY)|(?:WEEKDAY)(?:\s*(?:,|and|&)\s*(?:WEEKDAY))*|(\d{1,3}|NUM)\s*(minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?))|(daily|nightly|weekly|fortnightly|monthly|yearly|annually)|(?:on\s+)?(weekdays|WEEKDAYs(?:\s*(?:,|and|&)\s*WEEKDAYs)*))`), applyRepeat, []string{"every", "each", "daily", "nightly", "weekly", "monthly", "yearly", "annually", "days"}},
	{rRangeAny, span(`(?:(from|between)\s+)?(` + reClockT + `)\s*(-|–|—|to|until|till|til|and|through)\s*(` + reClockT + `)`), applyRangeAny, []string{"-", "–", "—", " to ", "til", " and ", "through"}},
	{rSlashAny, span(`(\d{1,2})[/\\](\d{1,2})(?:[/\\](\d{4}|\d{2}))?`), applySlashAny, []string{"#/", "#\\"}},
	{rDayOfMonth, span(`(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)`), applyDayOfMonth, []string{"#st", "#nd", "#rd", "#th"}},
	{rHalfHour, span(`half\s+(` + reHourWord + `)(?:\s*(AMPM))?`), applyHalfHour, []string{"half"}},
	{rDotTime, span(`(\d{1,2})\.(\d{2})(?:\s*(AMPM))?`), applyDotTime, []string{"#."}},
	{rHourH, span(`(\d{1,2})h(\d{2})`), applyHourH, []string{"#h"}},
	{rCompactHM, span(`(?:(in|within|after)\s+)?(\d{1,3})\s*h(?:rs?)?\s*(\d{1,2})\s*m(?:ins?)?`), applyCompactHM, []string{"#h", "# h"}},
	{rBareHourWord, span(`(?:(?:at|by|around|@)\s*(` + reHourWord + `)(?:\s*o'?\s*clock)?|(` + reHourWord + `)\s*o'?\s*clock)`), applyBareHourWord, []string{"#", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "&", " at ", " by ", "around", "@", "clock"}},
	{rPartWord, span(`(?:(this|tomorrow|tmr|tmrw)\s+)?((?:after|before)\s+lunch(?:time)?|night|arvo|lunchtime|lunch)`), applyPartWord, []string{"night", "arvo", "lunch"}},
	{rEndOf, span(`(?:by\s+)?(?:the\s+)?(?:(?:end|close)\s+of\s+(?:the\s+)?(?:(this|next|last)\s+)?(day|today|week|wk|month|year|yr|business)|(eod|eow|cob))`), applyEndOf, []string{"end", "close", "eod", "eow", "cob"}},
	{rSameTime, span(`(?:same|this)\s+time`), applySameTime, []string{"same time", "this time"}},
	{rAfterNext, span(`(?:the\s+)?(WEEKDAY)\s+after\s+next`), applyAfterNext, []string{"after"}},
	{rShiftOn, span(`(a|one|two|three|\d)\s+(weeks?|fortnights?)\s+(on|from|after)\s+(WEEKDAY|today|tomorrow|tonight)|(a|one|two|\d)\s+(weeks?|fortnights?)\s+(today|tomorrow|tonight)|(NUM)(days?|weeks?|fortnights?)\s+before\s+(WEEKDAY|today|tomorrow)`), applyShiftOn, []string{"week", "fortnight", "before"}},
	{rTmrw, span(`(tmrw|tomoz|2moro|2morrow|tomorow|tommorow|tommorrow)`), applyTmrw, []string{"tm", "tom", "2mo"}},
	{rHourBeforePart, span(`(\d{1,2}|` + reHourWord + `)`), applyBareHourWord, []string{"#", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "&", "tonight", "morning", "afternoon", "evening", "night", "arvo"}},
	{rTonite, span(`(tonite|2nite|tonight's)`), applyTonite, []string{"nite", "tonight's"}},
	{rTwelveNoon, span(`12\s*(noon|midday|midnight)`), applyTwelveNoon, []string{"12"}},
	{rDayWeek, span(`(WEEKDAY)\s+(week|fortnight)`), applyDayWeek, []string{"week", "fortnight"}},
	{rInBare, span(`in\s+(\d{1,3}|a\s+(?:bit|while|little\s+while|few))`), applyInBare, []string{" in "}},
	{rMonthYear, span(`(MONTH)\.?,?\s+(\d{4})`), applyMonthYear, []string{"#", "&", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
}

// ruleRow is one entry of the rule table.
type ruleRow = struct {
	id    ruleID
	r     rules.Rule
	apply applyFunc
	hint  []string
}

var (
	reDayWordBefore     = regexp.MustCompile(`(?i)(?:` + reWeekdayWord + `|today|tomorrow|tonight|tmrw?|\d(?:st|nd|rd|th)|` + reMonthWord + `\s+\d{1,2})\.?,?\s*(?:from\s+|between\s+)?$`)
	reUnitAfter         = regexp.MustCompile(`(?i)^\s*(?:%|percent|people|kg|km|cm|mm|miles?|pounds?|lbs?|years?\s+old|` + reUnitWord + `\b)`)
	reMonthAfter        = regexp.MustCompile(`(?i)^\s*(?:of\s+)?` + reMonthWord + `\b`)
	reMonthBefore       = regexp.MustCompile(`(?i)` + reMonthWord + `\.?\s*$`)
	reTimeCtxBefore     = regexp.MustCompile(`(?i)(?:\bat|@|\bby|\bfrom|\btill|\buntil|\bto|\baround|\babout|-|–)\s*$`)
	reTimeAfter         = regexp.MustCompile(`(?i)^\s*(?:,|at|@|-|from|\|)?\s*(?:\d{1,2}(?::\d{2}|\s*[ap]\.?m|\b)|noon|midday|midnight|half\b|quarter\b)`)
	reDayWordAfterRange = regexp.MustCompile(`(?i)^\s*(?:on\s+)?(?:tomorrow|tmrw|today|tonight|` + reWeekdayWord + `\b|(?:in|on)\s+the\s+(?:morning|afternoon|evening)|this\s+(?:morning|afternoon|evening))`)
	reOrdinalNoun       = regexp.MustCompile(`(?i)^\s*(?:floor|place|time|times|row|grade|century|anniversary|birthday|edition|round|attempt|person|in\s+line|gear|level|year|week|day|month|hour|minute|street|avenue)\b`)
	reHourPartAfter     = regexp.MustCompile(`(?i)^\s*(?:tonight|at\s+night\b|(?:this|tomorrow|tmrw?|on\s+\w+day|\w+day)\s+(?:morning|afternoon|evening|night|arvo)|(?:in|on)\s+the\s+(?:morning|afternoon|evening)|(?:morning|afternoon|evening|night|arvo)\b)`)
	reInBefore          = regexp.MustCompile(`(?i)\b(?:in|within|after)\s*$`)
	reAmPmAfter         = regexp.MustCompile(`(?i)^\s*(?:am|pm|a\.m|p\.m)\b`)
	reDayWordAfter      = regexp.MustCompile(`(?i)^\s*(?:tomorrow|tmrw?|2moro|yesterday|today|next|on|` + reWeekdayWord + `)\b`)
	reInBareEnd         = regexp.MustCompile(`(?i)^\s*(?:$|[.!?,;)]|(?:pls|please|thanks|thx|ta|cheers|mate|ok|okay|then)\b|to\s+[a-z])`)
	reCurrency          = regexp.MustCompile(`[$£€¥₹]\s*$`)
	reMinutesOf         = regexp.MustCompile(`(?i)^\s+(?:past|after|to|of|till|before)\s+(?:\d|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight)`)
	reMinutesOfPast     = regexp.MustCompile(`(?i)^\s+(?:past|after)\s`)
	weekdayWordRe       = regexp.MustCompile(`(?i)^` + reWeekdayWord + `$`)
)

// validChat rejects the eager matches of the chat rules ("10-20 people",
// "1/2 cup", "3.50 each", "half an hour").
func validChat(id ruleID, capt func(int) string, text string, left, right int) bool {
	before, after := text[:left], text[right:]
	switch id {
	case rRangeAny:
		a, b := capt(1), capt(3)
		if strings.EqualFold(capt(2), "and") && !strings.EqualFold(capt(0), "between") {
			return false
		}
		if reUnitAfter.MatchString(after) || reCurrency.MatchString(before) {
			return false
		}
		plain := func(s string) bool { return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0 }
		if plain(a) && plain(b) && capt(0) == "" && !reDayWordBefore.MatchString(before) && !reDayWordAfterRange.MatchString(after) {
			return false
		}
		if strings.Contains(a, ".") && !strings.ContainsAny(strings.ToLower(a+b), "apm") && capt(0) == "" {
			return false
		}
	case rSlashAny:
		alone := strings.TrimSpace(before) == "" && strings.TrimSpace(after) == "" // "05/06": the whole text
		return alone || capt(2) != "" || reSlashCtx.MatchString(before) || reTimeAfter.MatchString(after) || reDayWordBefore.MatchString(before)
	case rDayOfMonth:
		return !reMonthAfter.MatchString(after) && !reMonthBefore.MatchString(before) && !reOrdinalNoun.MatchString(after)
	case rHalfHour:
		return !reUnitAfter.MatchString(after) && !strings.HasPrefix(strings.TrimSpace(strings.ToLower(after)), "past")
	case rDotTime:
		if strings.HasPrefix(after, ".") || reUnitAfter.MatchString(after) || reCurrency.MatchString(before) {
			return false
		}
		h, _ := strconv.Atoi(capt(0))
		return capt(2) != "" || reTimeCtxBefore.MatchString(before) || h >= 13 || reHourPartAfter.MatchString(after)
	case rHourH:
		return !strings.HasPrefix(strings.ToLower(after), "m") && !reInBefore.MatchString(before)
	case rInBare:
		// "in 20" with nothing after it that says what the number counts
		// ("in 20 mins", "in 20 to 30 minutes", "in 20 attempts" are not it).
		return reInBareEnd.MatchString(after)
	case rSameTime:
		return strings.HasPrefix(strings.ToLower(text[left:right]), "same") || reDayWordAfter.MatchString(after)
	case rHourBeforePart:
		return reHourPartAfter.MatchString(after) && !strings.HasSuffix(strings.TrimSpace(before), ":")
	case rBareHourWord:
		if right < len(text) && (text[right] == ':' || text[right] == '.') && right+1 < len(text) && text[right+1] >= '0' && text[right+1] <= '9' {
			return false
		}
		if reMinutesOf.MatchString(after) && (reMinutesOfPast.MatchString(after) || minuteWords[strings.ToLower(capt(0))] > 0) {
			return false // "at ten to five", "at 10 past 5": minutes of the hour that follows
		}
		return !reUnitAfter.MatchString(after) && !reAmPmAfter.MatchString(after)
	}
	return true
}

func wordHour(s string) int {
	if n, ok := numberWords[strings.ToLower(s)]; ok {
		return n
	}
	n, _ := strconv.Atoi(s)
	return n
}

// applyDayOfMonth: "on the 21st": the next day of that number, this month
// or the next that has it.
func applyDayOfMonth(sp *timeSpec, x ruleCtx) {
	d := x.atoi(0)
	if d < 1 || d > 31 {
		sp.invalid = true
		return
	}
	y, mo, td := x.refL.Date()
	if d < td {
		mo++
	}
	for i := 0; i < 4 && d > daysIn(time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC).Year(), time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC).Month()); i++ {
		mo++
	}
	t := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
	sp.dateSet, sp.yearSet = true, true
	sp.y, sp.mo, sp.d, sp.dom = t.Year(), t.Month(), d, d
}

// applySlashAny: "14/02", "2/14", "14/02/27": by the zone's habit.
func applySlashAny(sp *timeSpec, x ruleCtx) {
	applySlashDate(sp, x)
	if y := x.capt(2); len(y) == 2 {
		sp.y = 2000 + x.atoi(2)
	}
}

// applyHalfHour: British "half nine" is 9:30, its am/pm from context.
func applyHalfHour(sp *timeSpec, x ruleCtx) {
	h := wordHour(x.capt(0))
	if h < 1 || h > 12 {
		sp.invalid = true
		return
	}
	if x.capt(1) != "" {
		hh, _ := hour12(h, x.capt(1))
		setTime(sp, hh, 30, 0)
		return
	}
	setBare(sp, h, 30)
}

// applyDotTime: "9.45am", "21.15", "at 9.45".
func applyDotTime(sp *timeSpec, x ruleCtx) {
	h, m := x.atoi(0), x.atoi(1)
	switch {
	case x.capt(2) != "":
		setTime12(sp, h, x.capt(2), m, 0)
	case h == 0 || h > 12:
		if h > 23 {
			sp.invalid = true
			return
		}
		setTime(sp, h, m, 0)
	default:
		if m > 59 {
			sp.invalid = true
			return
		}
		setBare(sp, h, m)
	}
}

// applyHourH: "17h30".
func applyHourH(sp *timeSpec, x ruleCtx) {
	if h := x.atoi(0); h <= 23 {
		setTime(sp, h, x.atoi(1), 0)
		return
	}
	sp.invalid = true
}

// applyCompactHM: "in 1h30m", "in 2hrs 15mins".
func applyCompactHM(sp *timeSpec, x ruleCtx) {
	if x.atoi(2) > 59 {
		sp.invalid = true
		return
	}
	sp.rel = true
	sp.relDur += time.Duration(x.atoi(1))*time.Hour + time.Duration(x.atoi(2))*time.Minute
}

// applyBareHourWord: "at 7", "at seven", "four o'clock".
func applyBareHourWord(sp *timeSpec, x ruleCtx) {
	s := x.capt(0)
	if s == "" {
		s = x.capt(1)
	}
	h := wordHour(s)
	switch {
	case h > 24:
		sp.invalid = true
	case h == 0 || h > 12:
		setTime(sp, h, 0, 0)
	default:
		setBare(sp, h, 0)
	}
}

// applyPartWord: "night", "tomorrow night", "arvo", "lunchtime".
func applyPartWord(sp *timeSpec, x ruleCtx) {
	switch strings.ToLower(x.capt(0)) {
	case "tomorrow", "tmr", "tmrw":
		nameDay(sp, 1)
	case "this":
		nameDay(sp, 0)
		sp.explicitDay = true
	}
	switch p := strings.ToLower(x.capt(1)); p {
	case "arvo":
		sp.part = "afternoon"
	case "lunchtime":
		sp.part = "lunch"
	case "after lunch", "after lunchtime", "before lunch", "before lunchtime":
		sp.part = strings.TrimSuffix(strings.Join(strings.Fields(p), " "), "time")
	default:
		sp.part = p
	}
}

// applyEndOf: "end of next week", "by end of day", "eod".
func applyEndOf(sp *timeSpec, x ruleCtx) {
	unit := strings.ToLower(x.capt(1))
	switch strings.ToLower(x.capt(2)) {
	case "eod", "cob":
		unit = "day"
	case "eow":
		unit = "week"
	}
	switch unit {
	case "today", "business":
		unit = "day"
	case "wk":
		unit = "week"
	case "yr":
		unit = "year"
	}
	switch strings.ToLower(x.capt(0)) {
	case "next":
		sp.windowOff = 1
	case "last":
		sp.windowOff = -1
	}
	if unit == "day" && sp.windowOff != 0 {
		sp.invalid = true
		return
	}
	sp.endOf = unit
}

// applySameTime: "same time next Monday": the reference's time of day.
func applySameTime(sp *timeSpec, x ruleCtx) {
	setTime(sp, x.refL.Hour(), x.refL.Minute(), 0)
	sp.sameTime = true
}

// applyAfterNext: "the Thursday after next": a week after the next one.
func applyAfterNext(sp *timeSpec, x ruleCtx) {
	ahead := (int(weekdayIndex(x.capt(0))) - int(x.refL.Weekday()) + 7) % 7
	if ahead == 0 {
		ahead = 7
	}
	nameDay(sp, ahead+7)
}

// applyShiftOn: "a week on Tuesday", "a fortnight today", "3 days before
// friday": the day of the weekday rule shifted.
func applyShiftOn(sp *timeSpec, x ruleCtx) {
	n, unit, day, sign := x.capt(0), x.capt(1), x.capt(3), 1
	switch {
	case x.capt(4) != "":
		n, unit, day = x.capt(4), x.capt(5), x.capt(6)
	case x.capt(7) != "":
		n, unit, day, sign = x.capt(7), x.capt(8), x.capt(9), -1
	}
	applyDayWord(sp, day, x.refL)
	sp.rollWeek = sign < 0 && weekdayWordRe.MatchString(day)
	amt, ok := amountF(n)
	if !ok || amt != float64(int(amt)) {
		sp.invalid = true
		return
	}
	days := int(amt)
	switch u := strings.ToLower(unit); {
	case strings.HasPrefix(u, "w"):
		days *= 7
	case strings.HasPrefix(u, "f"):
		days *= 14
	}
	sp.dayShift += sign * days
}

// applyDayWord: a weekday (the next one), today, tomorrow, tonight.
func applyDayWord(sp *timeSpec, w string, refL time.Time) {
	switch strings.ToLower(w) {
	case "today":
		nameDay(sp, 0)
	case "tomorrow":
		nameDay(sp, 1)
	case "tonight":
		nameDay(sp, 0)
		sp.part = "tonight"
	default:
		ahead := (int(weekdayIndex(w)) - int(refL.Weekday()) + 7) % 7
		if ahead == 0 {
			ahead = 7
		}
		nameDay(sp, ahead)
	}
}

// applyMonthYear: "June 2027": the whole month.
func applyMonthYear(sp *timeSpec, x ruleCtx) {
	mo := monthOf(x.capt(0))
	if mo == 0 {
		sp.invalid = true
		return
	}
	sp.dateSet, sp.yearSet, sp.monthOnly = true, true, true
	sp.y, sp.mo, sp.d = x.atoi(1), mo, 1
}

// clockEnd is one end of a range.
type clockEnd struct {
	h, m, s int
	suf     string
	known   bool // a 24-hour or suffixed time, or a word (noon)
	written bool // minutes written ("9:15"): read on the 24-hour clock unless a part of day says otherwise
}

var reClockParts = regexp.MustCompile(`(?i)^(\d{1,2})(?:[:.](\d{2})(?::(\d{2}))?)?\s*(am|pm|a\.m\.|p\.m\.)?$`)

func readClockEnd(s string) (clockEnd, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "noon", "midday":
		return clockEnd{h: 12, known: true}, true
	case "midnight":
		return clockEnd{h: 24, known: true}, true
	}
	m := reClockParts.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return clockEnd{}, false
	}
	c := clockEnd{suf: m[4]}
	c.h, _ = strconv.Atoi(m[1])
	c.m, _ = strconv.Atoi(m[2])
	c.s, _ = strconv.Atoi(m[3])
	if c.m > 59 || c.s > 59 || c.h > 24 {
		return c, false
	}
	if c.suf != "" {
		h, ok := hour12(c.h, c.suf)
		if !ok {
			return c, false
		}
		c.h, c.known = h, true
	}
	c.known = c.known || c.h == 0 || c.h > 12 || len(m[1]) == 2 && m[1][0] == '0'
	c.written = m[2] != ""
	return c, true
}

// applyRangeAny: "from 10 till 4", "noon to 3", "Saturday 10-12",
// "08:15:30 - 17:45:00", "3-5pm", "between 2 and 3:30".
func applyRangeAny(sp *timeSpec, x ruleCtx) {
	a, ok1 := readClockEnd(x.capt(1))
	b, ok2 := readClockEnd(x.capt(3))
	if !ok1 || !ok2 {
		sp.invalid = true
		return
	}
	switch {
	case a.known && b.known:
	case b.suf != "" && !a.known:
		// "3-5pm", "11-1pm": the start takes the end's half of the day
		// unless that puts it after the end.
		h, _ := hour12(a.h, b.suf)
		if h > b.h && a.h != 12 {
			h = a.h % 12
		}
		a.h, a.known = h, true
	case a.known && !b.known:
		// "noon to 3", "10am till 4": the first such hour after the start.
		e := b.h % 12
		if e <= a.h {
			e += 12
		}
		if e <= a.h {
			e -= 12
		}
		b.h, b.known = e, true
	case !a.known && !b.known:
		sp.rangeBare, sp.rangeWritten = true, a.written || b.written
	default: // "9-5pm" handled above; "9 - 17:00"
	}
	sp.timeSet, sp.hour, sp.min, sp.sec = true, a.h%24, a.m, a.s
	sp.endSet, sp.endH, sp.endMin, sp.endSec = true, b.h, b.m, b.s
	if a.h == 24 {
		sp.hour = 0
	}
}

// applyTmrw: the chat spellings of tomorrow.
func applyTmrw(sp *timeSpec, x ruleCtx) {
	nameDay(sp, 1)
}

// applyTonite: "tonite", "2nite": tonight.
func applyTonite(sp *timeSpec, x ruleCtx) {
	nameDay(sp, 0)
	sp.explicitDay, sp.part = true, "tonight"
}

// applyTwelveNoon: "12 noon", "12 midnight".
func applyTwelveNoon(sp *timeSpec, x ruleCtx) {
	if strings.EqualFold(x.capt(0), "midnight") {
		setTime(sp, 24, 0, 0)
		return
	}
	setTime(sp, 12, 0, 0)
}

// applyDayWeek: British "Friday week" (a week after the coming Friday),
// "Tuesday fortnight".
func applyDayWeek(sp *timeSpec, x ruleCtx) {
	applyDayWord(sp, x.capt(0), x.refL)
	sp.dayShift += 7
	if strings.EqualFold(x.capt(1), "fortnight") {
		sp.dayShift += 7
	}
}

// applyInBare: "in 20", "in a bit": an amount with no unit, or no amount.
// It is a question naming what was said, never an instant.
func applyInBare(sp *timeSpec, x ruleCtx) {
	sp.rel = true
	if n := x.capt(0); n[0] >= '0' && n[0] <= '9' {
		sp.question = "Do you mean in " + n + " minutes?"
		return
	}
	sp.question = "What time do you mean by " + strconv.Quote("in "+strings.Join(strings.Fields(x.capt(0)), " ")) + "? Please give a time or an amount, such as \"in 30 minutes\"."
}
