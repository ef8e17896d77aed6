package schedules

import (
	"context"
	"errors"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/teambition/rrule-go"
)

// Shape is what Inspect learnt about a rule before it is accepted.
type Shape struct {
	// RRule is the rule to store: COUNT written as the UNTIL of its last
	// occurrence (same occurrences from the same start), so that
	// expansion can always start near the time asked for.
	RRule string
	// MinGap is the smallest gap between two consecutive occurrences over
	// a full cycle of the rule (wall-clock time), zero when it has one
	// occurrence.
	MinGap time.Duration
	// Cycle is the span scanned: the rule's period times INTERVAL, or the
	// cycle of its finest filter when that is longer.
	Cycle time.Duration
}

// probeBudget bounds the search for a rule's first occurrence at
// creation: rrule-go cannot be interrupted, and a rule with no
// occurrence (FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30) runs to year 9999.
const probeBudget = 50 * time.Millisecond

// probeSlot lets one probe run at a time, so that rules that run long
// (an abandoned probe runs on to its end) hold one core at most.
var probeSlot = make(chan struct{}, 1)

// Inspect checks a rule started at the wall-clock time start before it
// is stored (EINVALID when it has no occurrence, a COUNT above MaxCount,
// or more than MaxStepsPerCycle steps or occurrences in one cycle) and
// returns its Shape. Its cost is bounded by those limits.
func Inspect(ctx context.Context, rule string, start time.Time) (Shape, error) {
	r, err := Compile(rule, start)
	if err != nil {
		return Shape{}, err
	}
	cycle, steps := r.cycle()
	if steps > MaxStepsPerCycle {
		return Shape{}, kairos.Errorf(kairos.EINVALID, "repeat %q steps through %d periods per cycle (at most %d): use a coarser FREQ with BYHOUR/BYMINUTE lists", rule, steps, MaxStepsPerCycle)
	}
	if r.opt.Count > MaxCount {
		return Shape{}, kairos.Errorf(kairos.EINVALID, "repeat %q: COUNT may be at most %d (use UNTIL for longer)", rule, MaxCount)
	}
	first, err := r.probe(ctx)
	if err != nil {
		return Shape{}, err
	}
	sh := Shape{RRule: rule, Cycle: cycle}
	if r.opt.Count > 0 {
		if sh.RRule, err = r.countToUntil(ctx); err != nil {
			return Shape{}, err
		}
	}
	sh.MinGap, err = r.minGap(ctx, first, cycle)
	return sh, err
}

// cycle is the span over which the rule's pattern repeats (at least
// one INTERVAL of periods, or the cycle of its coarsest filter), and
// how many FREQ periods rrule-go steps through in it.
func (r *Rule) cycle() (time.Duration, int64) {
	const day = 24 * time.Hour
	unit := map[rrule.Frequency]time.Duration{rrule.YEARLY: 366 * day, rrule.MONTHLY: 31 * day, rrule.WEEKLY: 7 * day,
		rrule.DAILY: day, rrule.HOURLY: time.Hour, rrule.MINUTELY: time.Minute, rrule.SECONDLY: time.Second}[r.opt.Freq]
	o := r.opt
	filter := time.Duration(0)
	grow := func(d time.Duration, on bool) {
		if on && d > filter {
			filter = d
		}
	}
	grow(time.Minute, len(o.Bysecond) > 0)
	grow(time.Hour, len(o.Byminute) > 0)
	grow(day, len(o.Byhour) > 0)
	grow(7*day, len(o.Byweekday) > 0)
	nth := false
	for _, w := range o.Byweekday {
		nth = nth || w.N() != 0
	}
	grow(31*day, len(o.Bymonthday) > 0 || nth || len(o.Bysetpos) > 0 && o.Freq == rrule.MONTHLY)
	grow(366*day, len(o.Bymonth) > 0 || len(o.Byyearday) > 0 || len(o.Byweekno) > 0 || len(o.Byeaster) > 0)
	span := unit * time.Duration(o.Interval)
	if filter > span {
		span = filter
	}
	return span, int64(span / (unit * time.Duration(o.Interval)))
}

// probe finds the rule's first occurrence within probeBudget; the
// search runs aside so that a rule with none cannot hold the caller.
func (r *Rule) probe(ctx context.Context) (time.Time, error) {
	found, known := r.patternPossible()
	if !r.monthDaysPossible() || known && !found {
		return time.Time{}, kairos.Errorf(kairos.EINVALID, "repeat rule %s has no occurrence", r.src)
	}
	if known { // it has occurrences: the search ends
		if w, ok := r.from(r.start)(); ok {
			return w, nil
		}
		return time.Time{}, kairos.Errorf(kairos.EINVALID, "repeat rule %s has no occurrence (it ends before it starts)", r.src)
	}
	select {
	case probeSlot <- struct{}{}:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	got := make(chan time.Time, 1)
	go func() {
		defer func() { <-probeSlot }()
		w, _ := r.from(r.start)()
		got <- w
	}()
	t := time.NewTimer(probeBudget)
	defer t.Stop()
	select {
	case w := <-got:
		if w.IsZero() {
			return time.Time{}, kairos.Errorf(kairos.EINVALID, "repeat rule %s has no occurrence", r.src)
		}
		return w, nil
	case <-t.C:
		return time.Time{}, kairos.Errorf(kairos.EINVALID, "repeat rule %s has no occurrence within reach", r.src)
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// monthDaysPossible says whether some BYMONTHDAY exists in some
// BYMONTH (a leap year's February has 29 days).
func (r *Rule) monthDaysPossible() bool {
	if len(r.opt.Bymonthday) == 0 || len(r.opt.Bymonth) == 0 {
		return true
	}
	for _, m := range r.opt.Bymonth {
		n := time.Date(2024, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
		for _, d := range r.opt.Bymonthday {
			if d <= n && -d <= n {
				return true
			}
		}
	}
	return false
}

// patternPossible looks for an occurrence of the rule's pattern (no
// COUNT, no UNTIL) in its last forty years before rrule-go's year 9999:
// a rule with none there has none at all unless its INTERVAL skips the
// whole span (then known is false and the guarded probe decides). rrule-go
// gives up on a rule at year 9999, so a rule with no occurrence costs
// forty years of empty periods here, not eight thousand.
func (r *Rule) patternPossible() (found, known bool) {
	cp := *r
	cp.opt.Count, cp.opt.Until = 0, time.Time{}
	floor := time.Date(rrule.MAXYEAR-40, 1, 1, 0, 0, 0, 0, time.UTC)
	if !floor.After(cp.start) {
		return false, false
	}
	if p0, p := cp.period(cp.start), cp.period(floor); cp.periodStart(p0+((p-p0)/int64(cp.opt.Interval)+1)*int64(cp.opt.Interval)).Year() > rrule.MAXYEAR {
		return false, false
	}
	_, found = cp.from(floor)()
	return found, true
}

// untilForm is countToUntil, "" when the rule has no occurrence (an
// UNTIL of the zero time would write no end at all).
func (r *Rule) untilForm(ctx context.Context) (string, error) {
	if _, ok := r.from(r.start)(); !ok {
		return "", nil
	}
	return r.countToUntil(ctx)
}

// countToUntil rewrites COUNT as the UNTIL of the last occurrence.
func (r *Rule) countToUntil(ctx context.Context) (string, error) {
	it := r.from(r.start)
	var last time.Time
	for i := 0; i < r.opt.Count; i++ {
		if i%256 == 255 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		w, ok := it()
		if !ok {
			break
		}
		last = w
	}
	o, err := rrule.StrToROption(r.src)
	if err != nil {
		return "", kairos.Errorf(kairos.EINVALID, "rrule %q: %v", r.src, err)
	}
	o.Count, o.Until, o.Dtstart = 0, last, time.Time{}
	return o.RRuleString(), nil
}

// minGap is the smallest wall-clock gap between consecutive occurrences
// from first over one cycle (and the gap to the next cycle's first). Its
// walk is bounded by MaxPerCall steps, not by time: whether a rule is too
// dense must not depend on how busy the machine is.
func (r *Rule) minGap(ctx context.Context, first time.Time, cycle time.Duration) (time.Duration, error) {
	end := first.Add(cycle)
	var gap time.Duration
	prev := first
	err := r.walkWithin(ctx, time.UTC, first, 0, func(t time.Time) bool {
		if !t.After(prev) {
			return true
		}
		if d := t.Sub(prev); gap == 0 || d < gap {
			gap = d
		}
		prev = t
		return !t.After(end)
	})
	if errors.Is(err, errSteps) {
		return 0, kairos.Errorf(kairos.EINVALID, "repeat rule %s has too many occurrences per cycle (at most %d)", r.src, MaxPerCall)
	}
	return gap, err
}
