package clockstate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// firstOccurrence moves res.Start (and End) forward to the first day the
// repeat's weekdays allow, on or after the date resolved.
func firstOccurrence(res *ParseResult, sp *timeSpec, loc *time.Location) {
	if len(sp.byDay) == 0 || res.Start == nil {
		return
	}
	s := res.Start.In(loc)
	for i := 0; i < 7; i++ {
		d := time.Date(s.Year(), s.Month(), s.Day()+i, 0, 0, 0, 0, time.UTC)
		for _, wd := range sp.byDay {
			if int(d.Weekday()) == wd {
				shiftDays(res, loc, i)
				return
			}
		}
	}
}

// shiftDays moves the result n calendar days in loc, keeping wall times.
func shiftDays(res *ParseResult, loc *time.Location, n int) {
	if n == 0 {
		return
	}
	for _, t := range []*time.Time{res.Start, res.End} {
		if t == nil {
			continue
		}
		l := t.In(loc)
		nt, _ := ResolveLocal(loc, l.Year(), l.Month(), l.Day()+n, l.Hour(), l.Minute(), l.Second())
		*t = nt
	}
}

var rruleDays = [7]string{"SU", "MO", "TU", "WE", "TH", "FR", "SA"}

// applyRepeat: "every weekday", "every other monday", "mondays and
// thursdays", "every 2 hours", "daily", "each morning": an RFC 5545 RRULE
// (FREQ=…;INTERVAL=…;BYDAY=…). The date and time come from the other
// pieces; Start is the first occurrence.
func applyRepeat(sp *timeSpec, x ruleCtx) {
	unit := strings.ToLower(x.capt(2))
	if w := strings.ToLower(x.capt(5)); w != "" {
		unit = map[string]string{"daily": "day", "nightly": "night", "weekly": "week", "fortnightly": "fortnight",
			"monthly": "month", "yearly": "year", "annually": "year"}[w]
	}
	if w := strings.ToLower(x.capt(6)); w != "" {
		unit = strings.TrimSuffix(w, "s")
	}
	interval := 1
	ord := strings.TrimSpace(strings.ToLower(x.capt(1)))
	switch ord {
	case "other", "second", "2nd": // "every other tuesday", "every second tuesday"
		interval = 2
	case "third", "3rd":
		interval = 3
	case "fourth", "4th":
		interval = 4
	}
	if ord != "" && ord != "other" {
		sp.nth = interval
	}
	freq := ""
	if n := x.capt(3); n != "" {
		amt, ok := amountF(n)
		if !ok || amt < 1 || amt != float64(int(amt)) {
			sp.invalid = true
			return
		}
		interval, freq = int(amt), everyNFreq(strings.ToLower(x.capt(4)))
	} else {
		freq = repeatFreq(sp, unit, &interval)
	}
	if freq == "" {
		sp.invalid = true
		return
	}
	sp.repeat = rruleString(freq, interval, sp.byDay)
	if freq == "MINUTELY" || freq == "HOURLY" {
		// "every 2 hours": the first time is one interval from now.
		d := time.Minute
		if freq == "HOURLY" {
			d = time.Hour
		}
		sp.rel = true
		sp.relDur += time.Duration(interval) * d
	}
}

// everyNFreq is the frequency of "every N <unit>".
func everyNFreq(unit string) string {
	switch {
	case strings.HasPrefix(unit, "mo"):
		return "MONTHLY"
	case strings.HasPrefix(unit, "m"):
		return "MINUTELY"
	case strings.HasPrefix(unit, "h"):
		return "HOURLY"
	case strings.HasPrefix(unit, "d"):
		return "DAILY"
	case strings.HasPrefix(unit, "w"):
		return "WEEKLY"
	}
	return ""
}

// repeatFreq is the frequency of "every <unit>"; weekdays go to sp.byDay
// and a part of day ("each morning") to sp.part.
func repeatFreq(sp *timeSpec, unit string, interval *int) string {
	switch {
	case unit == "day":
		return "DAILY"
	case unit == "night" || partWindows[unit] != [2]int{}:
		sp.part = unit
		return "DAILY"
	case unit == "weekday" || strings.HasPrefix(unit, "working"):
		sp.byDay = []int{1, 2, 3, 4, 5}
		return "WEEKLY"
	case unit == "weekend":
		sp.byDay = []int{6, 0}
		return "WEEKLY"
	case unit == "week" || unit == "wk":
		return "WEEKLY"
	case unit == "fortnight":
		*interval = 2
		return "WEEKLY"
	case unit == "month":
		return "MONTHLY"
	case unit == "year":
		return "YEARLY"
	}
	days := reWeekdayList.FindAllString(unit, -1)
	if len(days) == 2 && reDayRangeWord.MatchString(unit) {
		// "mon-fri", "monday to friday": every day from the first to the last.
		a, b := int(weekdayIndex(days[0])), int(weekdayIndex(days[1]))
		for d := a; ; d = (d + 1) % 7 {
			sp.byDay = append(sp.byDay, d)
			if d == b {
				break
			}
		}
		return "WEEKLY"
	}
	for _, m := range days {
		sp.byDay = append(sp.byDay, int(weekdayIndex(m)))
	}
	if len(sp.byDay) == 0 {
		return ""
	}
	return "WEEKLY"
}

func rruleString(freq string, interval int, byDay []int) string {
	rule := "FREQ=" + freq
	if interval > 1 {
		rule += ";INTERVAL=" + strconv.Itoa(interval)
	}
	if len(byDay) > 0 {
		days := make([]string, len(byDay))
		for i, d := range byDay {
			days[i] = rruleDays[d]
		}
		rule += ";BYDAY=" + strings.Join(days, ",")
	}
	return rule
}

var (
	reWeekdayList  = regexp.MustCompile(`(?i)` + reWeekdayWord)
	reDayRangeWord = regexp.MustCompile(`(?i)-|–|\bto\b|\bthrough\b|\bthru\b|\btill\b|\buntil\b`)
)
