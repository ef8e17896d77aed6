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
	every, other, unit := x.capt(0), x.capt(1) != "", strings.ToLower(x.capt(2))
	n, nUnit := x.capt(3), strings.ToLower(x.capt(4))
	if w := strings.ToLower(x.capt(5)); w != "" {
		unit = map[string]string{"daily": "day", "nightly": "night", "weekly": "week", "fortnightly": "fortnight",
			"monthly": "month", "yearly": "year", "annually": "year"}[w]
	}
	if w := strings.ToLower(x.capt(6)); w != "" {
		unit = strings.TrimSuffix(w, "s")
	}
	_ = every
	interval := 1
	if other {
		interval = 2
	}
	freq := ""
	switch {
	case n != "":
		amt, ok := amountF(n)
		if !ok || amt < 1 || amt != float64(int(amt)) {
			sp.invalid = true
			return
		}
		interval = int(amt)
		switch nUnit[0] {
		case 'm':
			freq = "MINUTELY"
			if strings.HasPrefix(nUnit, "mo") {
				freq = "MONTHLY"
			}
		case 'h':
			freq = "HOURLY"
		case 'd':
			freq = "DAILY"
		case 'w':
			freq = "WEEKLY"
		}
	case unit == "day" || unit == "night" || partWindows[unit] != [2]int{}:
		freq = "DAILY"
		if unit != "day" {
			sp.part = unit
		}
	case unit == "weekday" || strings.HasPrefix(unit, "working"):
		freq, sp.byDay = "WEEKLY", []int{1, 2, 3, 4, 5}
	case unit == "weekend":
		freq, sp.byDay = "WEEKLY", []int{6, 0}
	case unit == "week":
		freq = "WEEKLY"
	case unit == "fortnight":
		freq, interval = "WEEKLY", 2
	case unit == "month":
		freq = "MONTHLY"
	case unit == "year":
		freq = "YEARLY"
	default:
		freq = "WEEKLY"
		for _, m := range reWeekdayList.FindAllString(unit, -1) {
			sp.byDay = append(sp.byDay, int(weekdayIndex(m)))
		}
		if len(sp.byDay) == 0 {
			sp.invalid = true
			return
		}
	}
	rule := "FREQ=" + freq
	if interval > 1 {
		rule += ";INTERVAL=" + strconv.Itoa(interval)
	}
	if len(sp.byDay) > 0 {
		days := make([]string, len(sp.byDay))
		for i, d := range sp.byDay {
			days[i] = rruleDays[d]
		}
		rule += ";BYDAY=" + strings.Join(days, ",")
	}
	sp.repeat = rule
	switch freq {
	case "MINUTELY", "HOURLY":
		sp.rel = true
		d := time.Minute
		if freq == "HOURLY" {
			d = time.Hour
		}
		sp.relDur += time.Duration(interval) * d
	}
}

var reWeekdayList = regexp.MustCompile(`(?i)` + reWeekdayWord)
