package clockstate

import "time"

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
