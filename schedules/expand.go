package schedules

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/teambition/rrule-go"
)

// Limits of one expansion call. rrule-go counts from DTSTART on every
// call, so Compile makes every defaulted BY-part explicit and each call
// moves DTSTART forward to the period that holds the time asked for:
// the cost is that of one period, whatever the rule's age.
const (
	// MaxStepsPerCycle bounds the periods (and occurrences) a rule may
	// step through in one cycle of its filters; denser or finer rules are
	// refused at creation (Inspect).
	MaxStepsPerCycle = 1500
	// MaxCount is the largest COUNT accepted; Inspect turns it into UNTIL.
	MaxCount = 1000
	// MaxPerCall bounds the occurrences one call returns or passes over.
	MaxPerCall = 4 * MaxStepsPerCycle
	// CallBudget bounds the time of one call.
	CallBudget = 20 * time.Millisecond
)

// callBudget is the CallBudget walk holds a call to; a test that checks
// what a long walk returns (not how long it may take) lifts it, since a
// loaded machine can stall any walk past 20 ms of wall-clock time.
var callBudget = CallBudget

// errSteps: a walk passed MaxPerCall steps, which no machine's speed
// changes (a walk out of time is another EBUDGET: try again later).
var errSteps = kairos.Errorf(kairos.EBUDGET, "the repeat rule needs too many steps to expand")

// Rule is a compiled recurrence anchored at its wall-clock start.
type Rule struct {
	src   string        // the rule as written
	opt   rrule.ROption // defaults explicit, Dtstart the original start
	start time.Time     // floating wall time
}

// Compile parses rule (RRULE body) started at the wall-clock time start.
func Compile(rule string, start time.Time) (*Rule, error) {
	opt, err := rrule.StrToROption(rule)
	if err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "rrule %q: %v", rule, err)
	}
	start = floating(start)
	opt.Dtstart = start
	if _, err := rrule.NewRRule(*opt); err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "rrule %q: %v", rule, err)
	}
	explicitDefaults(opt, start)
	if opt.Interval < 1 {
		opt.Interval = 1
	}
	return &Rule{src: rule, opt: *opt, start: start}, nil
}

var pyDays = []rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

// explicitDefaults writes down the BY-parts that rrule-go would take
// from DTSTART (as its buildRRule does), so that DTSTART can move.
func explicitDefaults(o *rrule.ROption, dt time.Time) {
	if len(o.Byweekno) == 0 && len(o.Byyearday) == 0 && len(o.Bymonthday) == 0 && len(o.Byweekday) == 0 && len(o.Byeaster) == 0 {
		switch o.Freq {
		case rrule.YEARLY:
			if len(o.Bymonth) == 0 {
				o.Bymonth = []int{int(dt.Month())}
			}
			o.Bymonthday = []int{dt.Day()}
		case rrule.MONTHLY:
			o.Bymonthday = []int{dt.Day()}
		case rrule.WEEKLY:
			o.Byweekday = []rrule.Weekday{pyDays[dt.Weekday()]}
		}
	}
	if len(o.Byhour) == 0 && o.Freq < rrule.HOURLY {
		o.Byhour = []int{dt.Hour()}
	}
	if len(o.Byminute) == 0 && o.Freq < rrule.MINUTELY {
		o.Byminute = []int{dt.Minute()}
	}
	if len(o.Bysecond) == 0 && o.Freq < rrule.SECONDLY {
		o.Bysecond = []int{dt.Second()}
	}
}

// period is the index of the FREQ period holding the floating time t.
func (r *Rule) period(t time.Time) int64 {
	switch r.opt.Freq {
	case rrule.YEARLY:
		return int64(t.Year())
	case rrule.MONTHLY:
		return int64(t.Year())*12 + int64(t.Month()) - 1
	case rrule.WEEKLY:
		return floorDiv(floorDiv(t.Unix(), 86400)-r.weekShift(), 7)
	}
	return floorDiv(t.Unix(), int64(r.unit()/time.Second))
}

// periodStart is the first instant (floating) of period p.
func (r *Rule) periodStart(p int64) time.Time {
	switch r.opt.Freq {
	case rrule.YEARLY:
		return time.Date(int(p), 1, 1, 0, 0, 0, 0, time.UTC)
	case rrule.MONTHLY:
		return time.Date(int(floorDiv(p, 12)), time.Month(p-floorDiv(p, 12)*12+1), 1, 0, 0, 0, 0, time.UTC)
	case rrule.WEEKLY:
		return time.Unix((p*7+r.weekShift())*86400, 0).UTC()
	}
	return time.Unix(p*int64(r.unit()/time.Second), 0).UTC()
}

func (r *Rule) unit() time.Duration {
	return map[rrule.Frequency]time.Duration{rrule.DAILY: 24 * time.Hour, rrule.HOURLY: time.Hour,
		rrule.MINUTELY: time.Minute, rrule.SECONDLY: time.Second}[r.opt.Freq]
}

// weekShift is the day number (since 1970-01-01, a Thursday) of a
// week start: day d starts a week when (d-shift)%7 == 0.
func (r *Rule) weekShift() int64 {
	wkst := (r.opt.Wkst.Day() + 1) % 7 // rrule-go counts from Monday, Go from Sunday
	return int64((wkst - 4 + 7) % 7)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// from returns an iterator whose first occurrence is the rule's first at
// or after floor (floating): DTSTART moves to floor, or to the start of
// the next period in step with INTERVAL, or (with BYSETPOS, which counts
// within a whole period) to the start of floor's period. A rule with
// COUNT cannot move (the count runs from the start).
func (r *Rule) from(floor time.Time) rrule.Next {
	opt := r.opt
	if floor.After(r.start) && opt.Count == 0 {
		p0, p := r.period(r.start), r.period(floor)
		k := p - p0
		iv := int64(opt.Interval)
		switch {
		case k%iv != 0:
			opt.Dtstart = r.periodStart(p0 + (k/iv+1)*iv)
		case len(opt.Bysetpos) > 0:
			if k > 0 {
				opt.Dtstart = r.periodStart(p)
			}
		default:
			opt.Dtstart = floor.Truncate(time.Second)
		}
	}
	rr, err := rrule.NewRRule(opt)
	if err != nil { // compiled already; cannot happen
		return func() (time.Time, bool) { return time.Time{}, false }
	}
	return rr.Iterator()
}

// wallFloor is the earliest wall-clock time (floating) whose
// occurrence can resolve after `after` in loc: the wall time of after,
// less the largest offset drop among the zone changes within two days.
func wallFloor(after time.Time, loc *time.Location) time.Time {
	a := after.In(loc)
	_, off := a.Zone()
	low := off
	start, end := a.ZoneBounds()
	if !start.IsZero() && after.Sub(start) < 48*time.Hour {
		if _, o := start.Add(-time.Second).In(loc).Zone(); o < low {
			low = o
		}
	}
	if !end.IsZero() && end.Sub(after) < 48*time.Hour {
		if _, o := end.In(loc).Zone(); o < low {
			low = o
		}
	}
	return floating(a).Add(-time.Duration(off-low) * time.Second)
}

// walk feeds visit the rule's occurrences in loc from the wall floor of
// after on, resolved (each instant once, in order), until visit says
// stop. It stops with EBUDGET after MaxPerCall steps or CallBudget, and
// with ctx's error when ctx ends.
func (r *Rule) walk(ctx context.Context, loc *time.Location, after time.Time, visit func(time.Time) bool) error {
	return r.walkWithin(ctx, loc, after, callBudget, visit)
}

// walkWithin is walk with its own time bound; 0 leaves only the steps'
// bound and ctx (a check whose verdict must not depend on the machine's
// load).
func (r *Rule) walkWithin(ctx context.Context, loc *time.Location, after time.Time, budget time.Duration, visit func(time.Time) bool) error {
	floor := wallFloor(after, loc)
	it := r.from(floor)
	deadline := time.Now().Add(budget)
	var last time.Time
	for steps := 1; ; steps++ {
		if steps%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if steps > MaxPerCall {
				return errSteps
			}
			if budget > 0 && time.Now().After(deadline) {
				return kairos.Errorf(kairos.EBUDGET, "expanding the repeat rule took over %s (the machine is busy): try again", budget)
			}
		}
		w, ok := it()
		if !ok {
			return nil
		}
		if w.Before(floor) {
			continue
		}
		if t := resolve(loc, w); t.After(last) {
			last = t
			if !visit(t) {
				return nil
			}
		}
	}
}

// Next returns up to n (at most MaxPerCall) instants of the rule in loc
// strictly after after. Its cost is that of the periods around after,
// whatever the rule's age.
func (r *Rule) Next(ctx context.Context, loc *time.Location, after time.Time, n int) ([]time.Time, error) {
	n = min(n, MaxPerCall)
	var out []time.Time
	err := r.walk(ctx, loc, after, func(t time.Time) bool {
		if t.After(after) {
			out = append(out, t)
		}
		return len(out) < n
	})
	return out, err
}

// Passed counts the rule's occurrences in (since, until], up to limit.
func (r *Rule) Passed(ctx context.Context, loc *time.Location, since, until time.Time, limit int) (int, error) {
	n := 0
	err := r.walk(ctx, loc, since, func(t time.Time) bool {
		if t.After(until) {
			return false
		}
		if t.After(since) {
			n++
		}
		return n < limit
	})
	return n, err
}
