package clockstate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Repeat rules of issue 32 (item 5): the nth or last weekday of every
// month ("the second wednesday of every month", "last thursday monthly"),
// a day of every month ("every 1st"), a range of weekdays ("tue-thu"),
// and "twice a week" (the days asked unless named: "twice a week on mon
// and thu"). Each sets an RRULE; Start is its first occurrence ahead.

const (
	rNthWeekday ruleID = iota + 500
	rEveryNth
	rDayDash
	rTimesA
	rNthOfMonth
)

const reOrdWord = `(?:first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last|final)`

var monthlyRules = []ruleRow{
	{rNthWeekday, span(`(?:(every|each)\s+)?(?:the\s+)?(` + reOrdWord + `)\s+(WEEKDAY)\s+((?:of\s+)?(?:every|each)\s+month|monthly|of\s+(?:the|a)\s+month)|(?:monthly|(?:every|each)\s+month)\s+on\s+the\s+(` + reOrdWord + `)\s+(WEEKDAY)`),
		applyNthWeekday, []string{"month"}},
	{rEveryNth, span(`(?:every|each)\s+(\d{1,2})(?:st|nd|rd|th)(?:\s+of\s+the\s+month)?`), applyEveryNth, []string{"every", "each"}},
	{rDayDash, span(`(WEEKDAY)\s*(?:-|–|thru)\s*(WEEKDAY)`), applyDayDash, []string{"-", "–", "thru"}},
	{rTimesA, span(`(twice|thrice|two\s+times|three\s+times|four\s+times|[2-7]\s*(?:x|times))\s+(?:a|per|each|every)\s+(day|week|month)(?:\s+on\s+(WEEKDAY(?:\s*(?:,|and|&)\s*WEEKDAY)*))?`),
		applyTimesA, []string{"twice", "thrice", "times", "#x", "# x"}},
	// "last Monday of March", "third tuesday of september 2014": one day.
	{rNthOfMonth, span(`(?:the\s+)?(` + reOrdWord + `)\s+(WEEKDAY)\s+(?:of|in)\s+(MONTH)(?:,?\s+(\d{4}))?`), applyNthOfMonth,
		[]string{"first", "1st", "second", "2nd", "third", "3rd", "fourth", "4th", "fifth", "5th", "last", "final"}},
}

// validMonthly: "every second tuesday of the month" keeps its question
// (every two weeks, or the second Tuesday of each month?); a weekday range
// after "from" or "between" is a stretch of days, not a repeat.
func validMonthly(id ruleID, capt func(int) string, text string, left int) bool {
	switch id {
	case rNthWeekday:
		of := strings.ToLower(capt(3))
		if strings.HasPrefix(of, "of the") || strings.HasPrefix(of, "of a") {
			ord := strings.ToLower(capt(1))
			return capt(0) != "" && (ord == "first" || ord == "1st" || ord == "last" || ord == "final")
		}
	case rDayDash:
		return !reFromBetween.MatchString(text[:left])
	}
	return true
}

var reFromBetween = regexp.MustCompile(`(?i)\b(?:from|between)\s*$`)

// ordinalN is an ordinal word as RRULE's BYDAY counts it (-1: last).
func ordinalN(s string) int {
	switch strings.ToLower(s) {
	case "last", "final":
		return -1
	case "first", "1st":
		return 1
	case "second", "2nd":
		return 2
	case "third", "3rd":
		return 3
	case "fourth", "4th":
		return 4
	}
	return 5
}

// nthWeekday is the day of the nth (-1: last) weekday wd of y/mo; 0 when
// the month has no such day (a fifth Monday).
func nthWeekday(y int, mo time.Month, n int, wd time.Weekday) int {
	if n < 0 {
		last := daysIn(y, mo)
		back := (int(time.Date(y, mo, last, 0, 0, 0, 0, time.UTC).Weekday()) - int(wd) + 7) % 7
		return last - back
	}
	first := (int(wd) - int(time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC).Weekday()) + 7) % 7
	if d := 1 + first + 7*(n-1); d <= daysIn(y, mo) {
		return d
	}
	return 0
}

// nextNthWeekday is the first nth weekday wd on or after y/mo/d.
func nextNthWeekday(y int, mo time.Month, d, n int, wd time.Weekday) (int, time.Month, int) {
	for i := 0; i < 24; i++ {
		t := time.Date(y, mo+time.Month(i), 1, 0, 0, 0, 0, time.UTC)
		if day := nthWeekday(t.Year(), t.Month(), n, wd); day > 0 && (i > 0 || day >= d) {
			return t.Year(), t.Month(), day
		}
	}
	return y, mo, d
}

func applyNthWeekday(sp *timeSpec, x ruleCtx) {
	ord, day := x.capt(1), x.capt(2)
	if ord == "" {
		ord, day = x.capt(4), x.capt(5)
	}
	n, wd := ordinalN(ord), weekdayIndex(day)
	sp.dateSet, sp.yearSet = true, true
	sp.y, sp.mo, sp.d = nextNthWeekday(x.refL.Year(), x.refL.Month(), x.refL.Day(), n, wd)
	sp.nthDay, sp.nthWd = n, wd
	sp.repeat = "FREQ=MONTHLY;BYDAY=" + strconv.Itoa(n) + rruleDays[wd]
}

// applyEveryNth: "every 1st": the day of every month (BYMONTHDAY is added
// where a day of the month meets a monthly repeat).
func applyEveryNth(sp *timeSpec, x ruleCtx) {
	applyDayOfMonth(sp, x)
	sp.repeat = "FREQ=MONTHLY"
}

// applyDayDash: "tue-thu", "mon-fri": every day of the range, weekly.
func applyDayDash(sp *timeSpec, x ruleCtx) {
	a, b := int(weekdayIndex(x.capt(0))), int(weekdayIndex(x.capt(1)))
	for d := a; ; d = (d + 1) % 7 {
		sp.byDay = append(sp.byDay, d)
		if d == b {
			break
		}
	}
	sp.repeat = rruleString("WEEKLY", 1, sp.byDay)
}

// applyTimesA: "twice a week on mon and thu" is those days weekly; without
// the days, or with another count of them, which days is asked.
func applyTimesA(sp *timeSpec, x ruleCtx) {
	n := timesCount(x.capt(0))
	unit := strings.ToLower(x.capt(1))
	days := reWeekdayList.FindAllString(x.capt(2), -1)
	if unit == "week" && len(days) == n {
		for _, d := range days {
			sp.byDay = append(sp.byDay, int(weekdayIndex(d)))
		}
		sp.repeat = rruleString("WEEKLY", 1, sp.byDay)
		return
	}
	sp.rel = true
	which := map[string]string{"day": "times of the day", "week": "days of the week", "month": "days of the month"}[unit]
	sp.question = "Which " + strconv.Itoa(n) + " " + which + " do you mean, and at what time?"
}

func timesCount(s string) int {
	s = strings.ToLower(s)
	switch {
	case strings.HasPrefix(s, "twice"), strings.HasPrefix(s, "two"):
		return 2
	case strings.HasPrefix(s, "thrice"), strings.HasPrefix(s, "three"):
		return 3
	case strings.HasPrefix(s, "four"):
		return 4
	}
	return int(s[0] - '0')
}

// applyNthOfMonth: the nth (or last) weekday of a named month, that
// year's when given, else the next one not past.
func applyNthOfMonth(sp *timeSpec, x ruleCtx) {
	n, wd, mo := ordinalN(x.capt(0)), weekdayIndex(x.capt(1)), monthOf(x.capt(2))
	y, explicit := x.refL.Year(), x.capt(3) != ""
	if explicit {
		y = x.atoi(3)
	}
	d := nthWeekday(y, mo, n, wd)
	today := time.Date(x.refL.Year(), x.refL.Month(), x.refL.Day(), 0, 0, 0, 0, time.UTC)
	for i := 0; !explicit && (d == 0 || time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Before(today)) && i < 8; i++ {
		y++
		d = nthWeekday(y, mo, n, wd)
	}
	if mo == 0 || d == 0 {
		sp.invalid = true // "the fifth monday of february 2027"
		return
	}
	sp.dateSet, sp.yearSet = true, true
	sp.y, sp.mo, sp.d = y, mo, d
}
