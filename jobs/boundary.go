package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// Division kinds (policy sessions.auto_divide).
const (
	DivideDaily  = "daily"
	DivideWeekly = "weekly"
	DivideNone   = "none"
)

// Division is the automatic session division in force: daily or weekly
// (on Mondays) at a wall-clock time of the Session TZ, or none.
type Division struct {
	Kind         string // DivideDaily, DivideWeekly or DivideNone
	Hour, Minute int
}

// ParseDivision reads the sessions block of a policy. An empty kind means
// daily and an empty time midnight (the defaults); anything else that does
// not parse is an EINVALID error.
func ParseDivision(p kairos.SessionsPolicy) (Division, error) {
	d := Division{Kind: strings.ToLower(strings.TrimSpace(p.AutoDivide))}
	switch d.Kind {
	case "":
		d.Kind = DivideDaily
	case DivideDaily, DivideWeekly, DivideNone:
	default:
		return Division{Kind: DivideNone}, kairos.Errorf(kairos.EINVALID, "sessions.auto_divide %q is not daily, weekly or none", p.AutoDivide)
	}
	hm := strings.TrimSpace(p.AutoDivideTime)
	if hm == "" {
		return d, nil
	}
	h, m, ok := strings.Cut(hm, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || len(h) < 1 || len(h) > 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return Division{Kind: DivideNone}, kairos.Errorf(kairos.EINVALID, "sessions.auto_divide_time %q is not HH:MM", p.AutoDivideTime)
	}
	d.Hour, d.Minute = hh, mm
	return d, nil
}

// String renders the division as in the policy ("daily at 02:30").
func (d Division) String() string {
	if d.Kind == DivideNone {
		return DivideNone
	}
	return fmt.Sprintf("%s at %02d:%02d", d.Kind, d.Hour, d.Minute)
}

// Boundary returns the most recent division boundary at or before t in
// loc, or the zero time for DivideNone. The boundary is the division time
// on t's local date (daily) or on the Monday of t's local week (weekly),
// one day or week earlier when that lies after t. Dates are computed on
// the calendar, so a day is 23 or 25 hours long across DST changes; a
// division time skipped by a spring-forward change moves forward by the
// gap, and one that occurs twice takes the earlier instant.
func (d Division) Boundary(t time.Time, loc *time.Location) time.Time {
	if d.Kind != DivideDaily && d.Kind != DivideWeekly {
		return time.Time{}
	}
	if loc == nil {
		loc = time.UTC
	}
	l := t.In(loc)
	y, m, day := l.Date()
	step := 1
	if d.Kind == DivideWeekly {
		day -= (int(l.Weekday()) + 6) % 7 // back to Monday
		step = 7
	}
	b := LocalTime(loc, y, m, day, d.Hour, d.Minute)
	for b.After(t) {
		day -= step
		b = LocalTime(loc, y, m, day, d.Hour, d.Minute)
	}
	return b
}

// Next returns the first division boundary strictly after t, or the zero
// time for DivideNone.
func (d Division) Next(t time.Time, loc *time.Location) time.Time {
	b := d.Boundary(t, loc)
	if b.IsZero() {
		return b
	}
	if loc == nil {
		loc = time.UTC
	}
	step := 1
	if d.Kind == DivideWeekly {
		step = 7
	}
	// b's own local date may have moved (a skipped time); step from the
	// date the boundary belongs to.
	y, m, day := d.boundaryDate(b, loc)
	for {
		day += step
		n := LocalTime(loc, y, m, day, d.Hour, d.Minute)
		if n.After(t) {
			return n
		}
	}
}

// boundaryDate returns the local date a boundary instant was computed for.
func (d Division) boundaryDate(b time.Time, loc *time.Location) (int, time.Month, int) {
	l := b.In(loc)
	y, m, day := l.Date()
	// A skipped time is moved forward by at most a few hours; if that
	// crossed midnight, the boundary belongs to the previous date.
	if LocalTime(loc, y, m, day, d.Hour, d.Minute).Equal(b) {
		return y, m, day
	}
	return y, m, day - 1
}

// LocalTime returns the instant of a wall-clock time in loc. Out-of-range
// days normalise as in time.Date. A wall time that does not exist (a
// spring-forward gap) moves forward by the length of the gap; one that
// occurs twice (a fall-back fold) takes the earlier instant. time.Date
// promises neither, so both candidate offsets are tried explicitly.
func LocalTime(loc *time.Location, y int, m time.Month, day, hour, min int) time.Time {
	wall := time.Date(y, m, day, hour, min, 0, 0, time.UTC)
	// The offsets in force a day either side of the wall time: one
	// transition at most lies between them in every real zone.
	_, before := wall.Add(-24 * time.Hour).In(loc).Zone()
	_, after := wall.Add(24 * time.Hour).In(loc).Zone()
	var hit time.Time
	for _, off := range []int{before, after} {
		inst := wall.Add(-time.Duration(off) * time.Second)
		if _, o := inst.In(loc).Zone(); o == off && (hit.IsZero() || inst.Before(hit)) {
			hit = inst
		}
	}
	if hit.IsZero() {
		// In a gap: read with the offset before the change, the wall
		// time lands after it, moved forward by the gap.
		hit = wall.Add(-time.Duration(before) * time.Second)
	}
	return hit.In(loc)
}
