package kairos

import (
	"math"
	"time"
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
