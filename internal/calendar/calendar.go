// Package calendar is calendar arithmetic on wall-clock time: the DST
// rule (RFC 5545's way), calendar units, and the periods of summaries.
package calendar

import (
	"fmt"
	"math"
	"time"

	"github.com/kairos-agent/kairos"
)

// LocalKind says how a local wall-clock time maps to instants.
type LocalKind int

// Local kinds.
const (
	LocalExact    LocalKind = iota // exactly one instant
	LocalSkipped                   // in a DST gap: moved forward by the gap
	LocalRepeated                  // in a DST fold: the earlier instant taken
)

// ResolveLocal turns a wall-clock time in loc into an instant following
// RFC 5545 / Temporal "compatible" disambiguation: a local time skipped by
// a forward transition moves forward by the length of the gap, a local time
// that occurs twice takes the earlier instant. Go's time.Date guarantees
// neither, so the candidates are computed explicitly. Out-of-range fields
// normalize as in time.Date (month 13 is January of the next year).
func ResolveLocal(loc *time.Location, year int, month time.Month, day, hour, min, sec int) (time.Time, LocalKind) {
	wall := time.Date(year, month, day, hour, min, sec, 0, time.UTC)
	// Offsets in force around the wall time (±36 h covers any one
	// transition near it).
	var offs [7]int
	n := 0
	maxOff := math.MinInt
	for k := -3; k <= 3; k++ {
		_, off := wall.Add(time.Duration(k) * 12 * time.Hour).In(loc).Zone()
		seen := false
		for _, o := range offs[:n] {
			if o == off {
				seen = true
			}
		}
		if !seen {
			offs[n] = off
			n++
		}
		if off > maxOff {
			maxOff = off
		}
	}
	var found []time.Time
	for _, off := range offs[:n] {
		inst := wall.Add(-time.Duration(off) * time.Second)
		if _, o := inst.In(loc).Zone(); o == off {
			dup := false
			for _, f := range found {
				if f.Equal(inst) {
					dup = true
				}
			}
			if !dup {
				found = append(found, inst)
			}
		}
	}
	switch len(found) {
	case 0:
		// A gap: with the largest nearby offset the instant lies before
		// the transition, so the zone's offset there is the one in force
		// before it. Using it moves the wall time forward by the gap.
		_, before := wall.Add(-time.Duration(maxOff) * time.Second).In(loc).Zone()
		return wall.Add(-time.Duration(before) * time.Second).In(loc), LocalSkipped
	case 1:
		return found[0].In(loc), LocalExact
	default:
		earliest := found[0]
		for _, f := range found[1:] {
			if f.Before(earliest) {
				earliest = f
			}
		}
		return earliest.In(loc), LocalRepeated
	}
}

// AddCalendar adds years, months and days to t's wall-clock date in loc
// (clamping the day to the target month's length, as Temporal does),
// keeps its wall-clock time, and resolves the result with ResolveLocal.
// "Tomorrow at this time" across a DST change is AddCalendar(t, loc, 0, 0, 1),
// which is 23 or 25 hours later, not 24.
func AddCalendar(t time.Time, loc *time.Location, years, months, days int) time.Time {
	l := t.In(loc)
	y, m, d := l.Date()
	if years != 0 || months != 0 {
		total := y*12 + int(m) - 1 + years*12 + months
		y = total / 12
		if total < 0 && total%12 != 0 {
			y--
		}
		m = time.Month(total - y*12 + 1)
		if dim := DaysIn(y, m); d > dim {
			d = dim
		}
	}
	r, _ := ResolveLocal(loc, y, m, d+days, l.Hour(), l.Minute(), l.Second())
	return r.Add(time.Duration(l.Nanosecond()))
}

// DaysIn is the number of days of month m of year y.
func DaysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// PeriodKey returns the calendar-aligned period key of summaryType that
// contains t, in t's location: YYYY-MM-DD for conversation and daily
// summaries, the ISO week YYYY-Www (Monday to Sunday) for weekly ones,
// YYYY-MM, YYYY-Qn and YYYY for monthly, quarterly and yearly ones. It
// returns "" for an unknown summary type.
func PeriodKey(summaryType string, t time.Time) string {
	switch summaryType {
	case kairos.SummaryConversation, kairos.SummaryDaily:
		return t.Format("2006-01-02")
	case kairos.SummaryWeekly:
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case kairos.SummaryMonthly:
		return t.Format("2006-01")
	case kairos.SummaryQuarterly:
		return fmt.Sprintf("%04d-Q%d", t.Year(), (int(t.Month())-1)/3+1)
	case kairos.SummaryYearly:
		return fmt.Sprintf("%04d", t.Year())
	}
	return ""
}

// PeriodRange returns the half-open interval [start, end) that a period
// key (any of the five shapes) covers in loc; a nil loc means UTC. Weeks
// are ISO weeks, Monday 00:00 to the next Monday 00:00.
func PeriodRange(key string, loc *time.Location) (start, end time.Time, err error) {
	if loc == nil {
		loc = time.UTC
	}
	shape, y, n, err := kairos.ParsePeriodKey(key)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	switch shape {
	case kairos.ShapeDay:
		start = time.Date(y, time.Month(n/100), n%100, 0, 0, 0, 0, loc)
		end = start.AddDate(0, 0, 1)
	case kairos.ShapeWeek:
		start = isoWeekMonday(y, n, loc)
		end = start.AddDate(0, 0, 7)
	case kairos.ShapeMonth:
		start = time.Date(y, time.Month(n), 1, 0, 0, 0, 0, loc)
		end = start.AddDate(0, 1, 0)
	case kairos.ShapeQuarter:
		start = time.Date(y, time.Month(3*(n-1)+1), 1, 0, 0, 0, 0, loc)
		end = start.AddDate(0, 3, 0)
	case kairos.ShapeYear:
		start = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
		end = start.AddDate(1, 0, 0)
	}
	return start, end, nil
}

// isoWeekMonday returns the Monday that starts ISO week w of year y: week 1
// is the week holding January 4th.
func isoWeekMonday(y, w int, loc *time.Location) time.Time {
	jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, loc)
	offset := (int(jan4.Weekday()) + 6) % 7 // days since Monday
	return jan4.AddDate(0, 0, -offset+7*(w-1))
}
