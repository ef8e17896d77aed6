package clockstate

import (
	"strconv"
	"time"
)

// partWindows are the day-part windows in local hours [start, end).
var partWindows = map[string][2]int{
	"morning":   {6, 12},
	"afternoon": {12, 18},
	"evening":   {18, 22},
	"night":     {18, 24},
	"tonight":   {18, 24},
	"lunch":     {12, 14},
	// "after lunch" runs from the end of lunch to the end of the
	// afternoon, "before lunch" is the morning.
	"after lunch":  {14, 18},
	"before lunch": {6, 12},
}

// resolver turns a spec into instants in loc; refL is ref in loc.
type resolver struct {
	sp        *timeSpec
	refL      time.Time
	loc       *time.Location
	res       ParseResult
	y         int
	mo        time.Month
	d         int
	dateGiven bool
	sec       int
}

// resolveSpec turns the spec into instants in loc, in steps: the date,
// the hour a part of day settles, then the time, range, part or window.
func resolveSpec(sp *timeSpec, refL time.Time, loc *time.Location) ParseResult {
	r := &resolver{sp: sp, refL: refL, loc: loc,
		res: ParseResult{Kind: KindAbsolute, NeedsClarification: sp.question != "", ClarificationQuestion: sp.question}}
	if ok, q := r.date(); !ok {
		return ParseResult{Kind: KindInvalid}
	} else if q != "" {
		r.res.NeedsClarification, r.res.ClarificationQuestion = true, q
		return r.res
	}
	if q := r.settleHours(); q != "" {
		r.res.NeedsClarification, r.res.ClarificationQuestion = true, q
		return r.res
	}
	switch {
	case sp.timeSet:
		return r.clock()
	case sp.endOf != "":
		return r.endOf()
	case sp.part != "":
		return r.part()
	case sp.window != "":
		return windowRange(sp, refL, loc, &r.res)
	case r.dateGiven:
		return r.wholeDays()
	}
	return ParseResult{Kind: KindInvalid}
}

// date fixes the calendar day: a stated date (the next occurrence when no
// year), a day offset, a shift, the day "end of" names when a time is
// given. False when the date does not exist; a question when the day is
// named twice and the names disagree ("Friday 14 March" on a Sunday).
func (r *resolver) date() (bool, string) {
	sp := r.sp
	ty, tmo, td := r.refL.Date()
	r.y, r.mo, r.d = ty, tmo, td
	switch {
	case sp.endOf != "" && (sp.timeSet || sp.bareHour >= 0):
		r.y, r.mo, r.d = endOfDay(sp, r.refL)
		r.dateGiven = true
	case sp.dateSet:
		if sp.yearSet {
			r.y = sp.y
		}
		r.mo, r.d = sp.mo, sp.d
		if !sp.yearSet {
			// The next occurrence: this year's date unless it is over.
			today := time.Date(ty, tmo, td, 0, 0, 0, 0, time.UTC)
			for i := 0; i < 8; i++ {
				last := r.d
				if sp.monthOnly {
					last = daysIn(r.y, r.mo)
				}
				if r.d <= daysIn(r.y, r.mo) && !time.Date(r.y, r.mo, last, 0, 0, 0, 0, time.UTC).Before(today) {
					break
				}
				r.y++
			}
		}
		if r.d < 1 || r.d > daysIn(r.y, r.mo) {
			return false, ""
		}
		r.dateGiven = true
		if q := r.sameDay(); q != "" {
			return true, q
		}
	case sp.dayOffsetSet:
		r.y, r.mo, r.d = time.Date(ty, tmo, td+sp.dayOffset, 0, 0, 0, 0, time.UTC).Date()
		r.dateGiven = true
	}
	if sp.dayShift != 0 {
		r.y, r.mo, r.d = time.Date(r.y, r.mo, r.d+sp.dayShift, 0, 0, 0, 0, time.UTC).Date()
		r.dateGiven = true
	}
	today := time.Date(ty, tmo, td, 0, 0, 0, 0, time.UTC)
	for sp.rollWeek && time.Date(r.y, r.mo, r.d, 0, 0, 0, 0, time.UTC).Before(today) {
		r.weekLater() // "3 days before friday" said on a Wednesday: before next week's Friday
	}
	return true, ""
}

// weekLater moves the resolved day a week on.
func (r *resolver) weekLater() {
	r.y, r.mo, r.d = time.Date(r.y, r.mo, r.d+7, 0, 0, 0, 0, time.UTC).Date()
}

// todayIfAhead: a bare weekday naming today ("wed 14:00" said on a
// Wednesday morning) is today when h:mi today is still ahead; otherwise
// it stays a week on.
func (r *resolver) todayIfAhead(h, mi, sec int) {
	if !r.sp.todayNamed || r.sp.dayShift != 0 {
		return
	}
	ty, tmo, td := r.refL.Date()
	if t, _ := ResolveLocal(r.loc, ty, tmo, td, h, mi, sec); t.After(r.refL) {
		r.y, r.mo, r.d = ty, tmo, td
	}
}

// sameDay checks a date against a weekday or a relative day named with it.
func (r *resolver) sameDay() string {
	sp := r.sp
	date := time.Date(r.y, r.mo, r.d, 0, 0, 0, 0, time.UTC)
	label := strconv.Itoa(r.d) + " " + r.mo.String() + " " + strconv.Itoa(r.y)
	if sp.weekdayNamed > 0 && !sp.monthOnly {
		if wd := time.Weekday(sp.weekdayNamed - 1); date.Weekday() != wd {
			return label + " is a " + date.Weekday().String() + ", not a " + wd.String() + ": which day do you mean?"
		}
		return ""
	}
	if sp.dayOffsetSet {
		ty, tmo, td := r.refL.Date()
		if other := time.Date(ty, tmo, td+sp.dayOffset, 0, 0, 0, 0, time.UTC); !other.Equal(date) {
			return "Do you mean " + label + " or " + other.Format("2 January 2006") + "?"
		}
	}
	return ""
}

// endOfDay is the day "end of" names: today, the week's Friday, the
// month's last day, 31 December.
func endOfDay(sp *timeSpec, refL time.Time) (int, time.Month, int) {
	y, mo, d := refL.Date()
	switch sp.endOf {
	case "week":
		wd := (int(refL.Weekday()) + 6) % 7
		d = d - wd + 4 + 7*sp.windowOff
		if sp.windowOff == 0 && wd > 4 {
			d += 7 // said at the weekend: this week's Friday is past, the coming one is meant
		}
	case "month":
		mo += time.Month(sp.windowOff)
		return time.Date(y, mo+1, 0, 0, 0, 0, 0, time.UTC).Date()
	case "year":
		return y + sp.windowOff, time.December, 31
	}
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Date()
}

// settleHours gives bare hours ("at 7", "from 10 till 4") their half of
// the day from a part of day, or from the order of a range; otherwise it
// is the question to ask.
func (r *resolver) settleHours() string {
	sp := r.sp
	if sp.rangeBare {
		return r.settleRange()
	}
	if sp.clockBare && !sp.endSet {
		// "7:30 this evening": the part of day says which half.
		if h, ok := partHour(sp.part, sp.hour); ok && sp.part != "" {
			sp.hour, sp.part, sp.clockBare = h, "", false
		}
	}
	if sp.clockBare && !sp.endSet && sp.part == "" && !sp.yearSet && !sp.sameTime && dayFirstZone(r.loc.String()) == -1 {
		// "4:15 on wed" from a 12-hour clock country: am or pm is not said.
		hm := strconv.Itoa(sp.hour) + ":" + twoDigits(sp.min)
		return "Do you mean " + hm + "am or " + hm + "pm" + r.whichHalf(sp.hour%12, sp.min, hm) + "?"
	}
	if sp.firstThing && sp.bareHour < 0 && !sp.timeSet {
		// "first thing monday": the start of the part of day named.
		sp.hour, sp.timeSet, sp.part = partWindows[sp.part][0], true, ""
	}
	if sp.bareHour < 0 || sp.timeSet {
		return ""
	}
	h, ok := partHour(sp.part, sp.bareHour)
	if !ok {
		hm := strconv.Itoa(sp.bareHour)
		if sp.min > 0 {
			hm += ":" + twoDigits(sp.min) // "ten to five": 4:50am or 4:50pm
		}
		return "Do you mean " + hm + "am or " + hm + "pm" + r.whichHalf(sp.bareHour%12, sp.min, hm) + "?"
	}
	sp.hour, sp.timeSet, sp.part = h, true, ""
	return ""
}

// whichHalf names, for a time without a date, when each reading comes
// next (": 7 this evening or 7 tomorrow morning"), the sooner first; ""
// when the date is given.
func (r *resolver) whichHalf(h, mi int, hm string) string {
	if r.dateGiven {
		return ""
	}
	next := func(hour int) time.Time {
		ty, tmo, td := r.refL.Date()
		t, _ := ResolveLocal(r.loc, ty, tmo, td, hour, mi, 0)
		if t.Before(r.refL) {
			t, _ = ResolveLocal(r.loc, ty, tmo, td+1, hour, mi, 0)
		}
		return t
	}
	a, b := next(h), next(h+12)
	if b.Before(a) {
		a, b = b, a
	}
	return ": " + hm + " " + dayPartLabel(a, r.refL) + " or " + hm + " " + dayPartLabel(b, r.refL)
}

// dayPartLabel is "this morning", "tomorrow evening", … for t seen from refL.
func dayPartLabel(t, refL time.Time) string {
	t = t.In(refL.Location())
	day := "this"
	if y, m, d := t.Date(); y != refL.Year() || m != refL.Month() || d != refL.Day() {
		day = "tomorrow"
	}
	switch h := t.Hour(); {
	case h < 12:
		return day + " morning"
	case h < 18:
		return day + " afternoon"
	case day == "this" && h >= 21:
		return "tonight"
	}
	return day + " evening"
}

// partHour is bare hour h (1-12) in part of day part.
func partHour(part string, h int) (int, bool) {
	switch part {
	case "morning", "before lunch":
		return h % 12, true
	case "afternoon", "lunch", "after lunch":
		return h%12 + 12, true
	case "evening", "tonight":
		if h == 12 {
			return 24, true // "tonight at 12": midnight, not noon
		}
		return h%12 + 12, true
	case "night":
		if h >= 5 && h <= 11 {
			return h + 12, true
		}
		if h == 12 {
			return 24, true
		}
		if h >= 1 && h <= 4 {
			return h, true // "2 at night": the small hours
		}
	}
	return 0, false
}

func (r *resolver) settleRange() string {
	sp := r.sp
	a, b := sp.hour, sp.endH
	if sp.part != "" {
		ha, ok1 := partHour(sp.part, a)
		hb, ok2 := partHour(sp.part, b)
		if !ok1 || !ok2 {
			return "Do you mean the morning or the afternoon?"
		}
		if sp.part == "morning" && b == 12 {
			hb = 12
		}
		sp.hour, sp.endH, sp.part = ha, hb, ""
		return ""
	}
	switch {
	case sp.rangeWritten: // "8:00 - 9:15": the clock as written
	case b == 12 && a < 12: // "10-12": the morning to noon
	case a > b: // "from 10 till 4": the morning to the afternoon
		sp.endH = b + 12
	default:
		return "Do you mean " + strconv.Itoa(a) + " to " + strconv.Itoa(b) + " in the morning or in the afternoon?"
	}
	return ""
}

func (r *resolver) at(y int, mo time.Month, d, h, mi int) time.Time {
	t, k := ResolveLocal(r.loc, y, mo, d, h, mi, r.sec)
	if r.res.Local == LocalExact {
		r.res.Local = k
	}
	return t
}

func (r *resolver) set(s time.Time, e *time.Time) ParseResult {
	r.res.Start, r.res.End = &s, e
	return r.res
}

// clock is a time of day (and a range's end) on the day resolved; a time
// without a date is its next occurrence.
func (r *resolver) clock() ParseResult {
	sp := r.sp
	r.sec = sp.sec
	r.todayIfAhead(sp.hour, sp.min, sp.sec)
	start := r.at(r.y, r.mo, r.d, sp.hour, sp.min)
	if (sp.part == "tonight" || sp.part == "night") && sp.hour < 5 && r.dateGiven {
		// "1am tonight": the small hours after the evening named.
		r.y, r.mo, r.d = time.Date(r.y, r.mo, r.d+1, 0, 0, 0, 0, time.UTC).Date()
		start = r.at(r.y, r.mo, r.d, sp.hour, sp.min)
	}
	for i := 0; sp.dom > 0 && sp.weekdayNamed == 0 && start.Before(r.refL) && i < 4; i++ {
		// "on the 15th at 9am" said on the 15th at ten: next month's 15th.
		r.y, r.mo, r.d = nextMonthWith(r.y, r.mo, sp.dom)
		start = r.at(r.y, r.mo, r.d, sp.hour, sp.min)
	}
	for i := 0; sp.nthDay != 0 && start.Before(r.refL) && i < 2; i++ {
		// "the last thursday of every month at 6pm" said that evening: next month's.
		r.y, r.mo, r.d = nextNthWeekday(r.y, r.mo+1, 1, sp.nthDay, sp.nthWd)
		start = r.at(r.y, r.mo, r.d, sp.hour, sp.min)
	}
	for i := 0; sp.dateSet && !sp.yearSet && !sp.monthOnly && sp.dom == 0 && sp.weekdayNamed == 0 && start.Before(r.refL) && i < 8; i++ {
		// "14/02 at 8pm" said that evening at nine: next year's, as a past date is.
		r.res.Local = LocalExact
		if r.y++; r.d <= daysIn(r.y, r.mo) {
			start = r.at(r.y, r.mo, r.d, sp.hour, sp.min)
		}
	}
	if sp.rollWeek && start.Before(r.refL) {
		r.weekLater() // "2 days before friday at 9am", 9am today already past
		start = r.at(r.y, r.mo, r.d, sp.hour, sp.min)
	}
	if !r.dateGiven && start.Before(r.refL) {
		r.res.Local = LocalExact
		r.y, r.mo, r.d = time.Date(r.y, r.mo, r.d+1, 0, 0, 0, 0, time.UTC).Date()
		start = r.at(r.y, r.mo, r.d, sp.hour, sp.min)
	}
	if !sp.endSet {
		return r.set(start, nil)
	}
	r.sec = sp.endSec
	end := r.at(r.y, r.mo, r.d, sp.endH, sp.endMin)
	if !end.After(start) {
		end = r.at(r.y, r.mo, r.d+1, sp.endH, sp.endMin)
	}
	return r.set(start, &end)
}

// part is a part of day as a window; without a date, today's unless over.
func (r *resolver) part() ParseResult {
	w := partWindows[r.sp.part]
	r.todayIfAhead(w[0], 0, 0)
	end := r.at(r.y, r.mo, r.d, w[1], 0)
	if !r.dateGiven && !end.After(r.refL) {
		r.y, r.mo, r.d = time.Date(r.y, r.mo, r.d+1, 0, 0, 0, 0, time.UTC).Date()
		end = r.at(r.y, r.mo, r.d, w[1], 0)
	}
	return r.set(r.at(r.y, r.mo, r.d, w[0], 0), &end)
}

// wholeDays is a date as a whole-day window (a month, a range of days).
func (r *resolver) wholeDays() ParseResult {
	sp := r.sp
	r.res.DayOnly = true
	y, mo, d := r.y, r.mo, r.d
	switch {
	case sp.monthOnly:
		e := r.at(y, mo+1, 1, 0, 0)
		return r.set(r.at(y, mo, 1, 0, 0), &e)
	case sp.endDaySet:
		e := r.at(y, mo, d+1+sp.endDayOffset-sp.dayOffset, 0, 0)
		return r.set(r.at(y, mo, d, 0, 0), &e)
	}
	e := r.at(y, mo, d+1, 0, 0)
	return r.set(r.at(y, mo, d, 0, 0), &e)
}

// endOf is "end of day" (17:00 to midnight), "end of the week" (its
// Friday), "end of the month" (its last day), "end of the year" (31
// December), each a window.
func (r *resolver) endOf() ParseResult {
	if r.sp.endOf == "day" {
		e := r.at(r.y, r.mo, r.d+1, 0, 0)
		return r.set(r.at(r.y, r.mo, r.d, 17, 0), &e)
	}
	y, mo, d := endOfDay(r.sp, r.refL)
	e := r.at(y, mo, d+1, 0, 0)
	r.res.DayOnly = true
	return r.set(r.at(y, mo, d, 0, 0), &e)
}

// combineWindow joins a window with what is said inside it: "next month
// on the 3rd" is the 3rd of next month, "same time next week" seven days
// on. Anything else with a window ("next week at 5pm", "this weekend at
// 10am") is a question, and so are a month with a time ("in March at
// 5pm") and a range of days with a time: the day would otherwise be a
// guess.
func combineWindow(sp *timeSpec, refL time.Time) string {
	timed := sp.timeSet || sp.bareHour >= 0 || sp.part != ""
	switch {
	case sp.window == "week" && sp.sameTime && !sp.dateSet && !sp.dayOffsetSet:
		sp.dayOffset, sp.dayOffsetSet, sp.window = 7*sp.windowOff, true, ""
	case sp.window == "month" && sp.dom > 0 && sp.windowThe:
		sp.window = "" // "the 1st of the month": the day of the month alone, the next one
	case sp.window == "month" && sp.dom > 0:
		first := time.Date(refL.Year(), refL.Month()+time.Month(sp.windowOff), 1, 0, 0, 0, 0, time.UTC)
		sp.y, sp.mo, sp.d, sp.window = first.Year(), first.Month(), sp.dom, ""
	case sp.window != "" && sp.repeat != "":
		return repeatWindowQuestion(sp)
	case sp.window != "" && (timed || sp.dateSet || sp.dayOffsetSet || sp.endOf != ""):
		return "Which day of the " + sp.window + " do you mean?"
	case sp.monthOnly && timed:
		return "Which day of " + sp.mo.String() + " do you mean?"
	case sp.endDaySet && timed:
		return "Which of those days do you mean?"
	case len(sp.byDay) > 0 && sp.weekdayNamed > 0 && !hasDay(sp.byDay, sp.weekdayNamed-1):
		return "Which days do you mean: " + time.Weekday(sp.weekdayNamed-1).String() + " or the days of the repeat?"
	}
	return ""
}

// repeatWindowQuestion: a repeat inside a window ("every day this week",
// "every second tuesday of the month") is asked, never a window with a
// rule; "every second tuesday of the month" has two readings.
func repeatWindowQuestion(sp *timeSpec) string {
	ord := map[int]string{2: "second", 3: "third", 4: "fourth"}[sp.nth]
	if sp.window == "month" && ord != "" && len(sp.byDay) == 1 {
		day := time.Weekday(sp.byDay[0]).String()
		return "Do you mean every " + ord + " " + day + " (every " + strconv.Itoa(sp.nth) + " weeks) or the " + ord + " " + day + " of each month?"
	}
	return "Which days of the " + sp.window + " do you mean, and until when?"
}

func hasDay(days []int, d int) bool {
	for _, x := range days {
		if x == d {
			return true
		}
	}
	return false
}

// nextMonthWith is day d of the first month after (y, mo) that has it.
func nextMonthWith(y int, mo time.Month, d int) (int, time.Month, int) {
	for i := 1; i <= 12; i++ {
		t := time.Date(y, mo+time.Month(i), 1, 0, 0, 0, 0, time.UTC)
		if d <= daysIn(t.Year(), t.Month()) {
			return t.Year(), t.Month(), d
		}
	}
	return y, mo, d
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
