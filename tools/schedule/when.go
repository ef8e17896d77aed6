package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
)

// when reads the call's time in loc: its start (zero without one), the
// assumptions the reading took (stated in the approval), or a
// clarification question. A repeat the reading carries ("every day at 9")
// becomes s's repeat when the call gave none.
//
// Two readings (issue 32): when_iso is the model's own reading of when.
// Where both are given and they disagree, or the words are asked about,
// the user is asked with both shown: neither reading silently wins. A day
// with no time of day never fires at midnight: it takes
// schedules.default_time, stated, or the time is asked (dayOnly).
func (t *Tool) when(a args, s *kairos.Schedule, loc *time.Location, now time.Time) (time.Time, []string, string, error) {
	w, iso := strings.TrimSpace(a.When), strings.TrimSpace(a.WhenISO)
	var model *time.Time
	if iso != "" {
		m, err := time.Parse(time.RFC3339, iso)
		if err != nil {
			return time.Time{}, nil, "", kairos.Errorf(kairos.EINVALID, "when_iso %q is not RFC 3339 with an offset (e.g. 2026-11-25T09:00:00+01:00)", iso)
		}
		m = m.In(loc)
		model = &m
	}
	if w == "" {
		if model != nil {
			return *model, nil, "", nil
		}
		return time.Time{}, nil, "", nil
	}
	p := t.cfg.Parse(w, s.TZ, now)
	switch {
	case p.NeedsClarification:
		q := p.ClarificationQuestion
		if q == "" {
			q = fmt.Sprintf("When exactly do you mean by %q?", w)
		}
		if model != nil {
			q = fmt.Sprintf("%s (the assistant read %q as %s; I could not settle it)", q, w, Label(*model, s.TZ))
		}
		return time.Time{}, nil, q, nil
	case p.Start == nil:
		return time.Time{}, nil, "", kairos.Errorf(kairos.EINVALID, "I cannot read a time in %q; say e.g. \"tomorrow at 9\", \"in 20 minutes\" or give RFC 3339", w)
	}
	if s.Repeat == "" {
		s.Repeat = p.Repeat // the same reading as `kairos clock parse`
	}
	if p.DayOnly {
		start, note, q := t.dayOnly(p, w, s, loc, now, model)
		return start, append(p.Assumptions, note...), q, nil
	}
	if model != nil && !p.Start.Equal(*model) {
		return time.Time{}, nil, fmt.Sprintf("I read %q as %s; the assistant read it as %s. Which do you mean?", w, Label(*p.Start, s.TZ), Label(*model, s.TZ)), nil
	}
	return p.Start.In(loc), p.Assumptions, "", nil
}

// dayOnly gives a day without a time of day (p.DayOnly) its time: the
// repeat's own time of day, else schedules.default_time (with a note),
// else a question; a stretch of days ("next week") asks which day, and a
// model's reading of the time is shown to the user, never taken.
func (t *Tool) dayOnly(p Parsed, w string, s *kairos.Schedule, loc *time.Location, now time.Time, model *time.Time) (time.Time, []string, string) {
	day := p.Start.In(loc)
	label := day.Format("Mon 2 Jan")
	if p.End != nil && p.End.Sub(*p.Start) > 25*time.Hour {
		return time.Time{}, nil, fmt.Sprintf("%q is more than one day (from %s to %s): which day and time do you mean?",
			w, label, p.End.In(loc).Add(-time.Hour).Format("Mon 2 Jan"))
	}
	if model != nil {
		return time.Time{}, nil, fmt.Sprintf("%q names %s but no time of day; the assistant read it as %s. Is that the time you mean?", w, label, Label(*model, s.TZ))
	}
	if s.Repeat != "" && t.cfg.ParseRepeat != nil {
		if rr, err := t.cfg.ParseRepeat(s.Repeat); err == nil && rr.HasTime {
			return day, nil, "" // "every weekday at 8am" with when "monday": the repeat's time
		}
	}
	pol := t.policy().Schedules
	if h, m, ok := pol.DefaultTimeOfDay(); ok {
		start, _ := calendar.ResolveLocal(loc, day.Year(), day.Month(), day.Day(), h, m, 0)
		if start.After(now) {
			return start, []string{fmt.Sprintf("no time of day was given: %s from schedules.default_time", pol.DefaultTime)}, ""
		}
	}
	return time.Time{}, nil, fmt.Sprintf("%q names %s but no time of day: at what time?", w, label)
}
