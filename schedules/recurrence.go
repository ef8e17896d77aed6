package schedules

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
	"github.com/teambition/rrule-go"
)

// WallLayout is how a schedule's Start (wall-clock time in its zone) is
// written.
const WallLayout = "2006-01-02T15:04:05"

// Repeat is a parsed recurrence: a normalized RRULE and, when the words
// named one, the time of day.
type Repeat struct {
	RRule        string
	Hour, Minute int
	HasTime      bool
}

var (
	reEveryN    = regexp.MustCompile(`^every\s+(\d+|other)\s+(minute|hour|day|week|month|year)s?\b`)
	reEvery     = regexp.MustCompile(`^(?:every\s+(minute|hour|day|week|month|year)|(hourly|daily|weekly|monthly|yearly|annually))\b`)
	reEveryDays = regexp.MustCompile(`^every\s+((?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*(?:\s*,\s*|\s+and\s+|\s+)?)+)`)
	reWeekday   = regexp.MustCompile(`^every\s+(weekday|weekend(?:\s+day)?)s?\b`)
	reLastDay   = regexp.MustCompile(`^(?:on\s+)?the\s+last\s+day\s+of\s+(?:every|each)\s+month\b`)
	reOnDays    = regexp.MustCompile(`\bon\s+((?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*(?:\s*,\s*|\s+and\s+|\s+)?)+)`)
	reMonthDay  = regexp.MustCompile(`\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	reAt        = regexp.MustCompile(`\bat\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?|\bat\s+(noon|midnight)`)
	reDayName   = regexp.MustCompile(`(mon|tue|wed|thu|fri|sat|sun)[a-z]*`)
)

var dayCodes = map[string]string{"mon": "MO", "tue": "TU", "wed": "WE", "thu": "TH", "fri": "FR", "sat": "SA", "sun": "SU"}

// ParseRepeat reads an RFC 5545 RRULE ("FREQ=WEEKLY;BYDAY=MO", with or
// without the "RRULE:" prefix) or a plain form ("every weekday at 8am",
// "every 2 weeks on Monday", "on the last day of every month", "daily",
// "every Tuesday and Thursday at 18:30"). An unreadable one is EINVALID.
func ParseRepeat(s string) (Repeat, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return Repeat{}, kairos.Errorf(kairos.EINVALID, "the repeat is empty")
	}
	if strings.HasPrefix(t, "rrule:") || strings.HasPrefix(t, "freq=") {
		body := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "RRULE:")
		opt, err := rrule.StrToROption(body)
		if err != nil {
			return Repeat{}, kairos.Errorf(kairos.EINVALID, "repeat %q is not a valid RRULE: %v", s, err)
		}
		opt.Dtstart = time.Time{}
		if _, err := rrule.NewRRule(*opt); err != nil {
			return Repeat{}, kairos.Errorf(kairos.EINVALID, "repeat %q is not a valid RRULE: %v", s, err)
		}
		return Repeat{RRule: opt.RRuleString()}, nil
	}
	var parts []string
	switch {
	case reLastDay.MatchString(t):
		parts = []string{"FREQ=MONTHLY", "BYMONTHDAY=-1"}
	case reWeekday.MatchString(t):
		if strings.Contains(reWeekday.FindStringSubmatch(t)[1], "weekend") {
			parts = []string{"FREQ=WEEKLY", "BYDAY=SA,SU"}
		} else {
			parts = []string{"FREQ=WEEKLY", "BYDAY=MO,TU,WE,TH,FR"}
		}
	case reEveryN.MatchString(t):
		m := reEveryN.FindStringSubmatch(t)
		n := 2
		if m[1] != "other" {
			v, err := strconv.Atoi(m[1])
			if err != nil || v < 1 || v > 1000 {
				return Repeat{}, kairos.Errorf(kairos.EINVALID, "repeat %q: the interval must be 1 to 1000", s)
			}
			n = v
		}
		parts = []string{"FREQ=" + freqOf(m[2]), "INTERVAL=" + strconv.Itoa(n)}
	case reEvery.MatchString(t):
		m := reEvery.FindStringSubmatch(t)
		unit := m[1]
		if unit == "" {
			unit = map[string]string{"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annually": "year"}[m[2]]
		}
		parts = []string{"FREQ=" + freqOf(unit)}
	case reEveryDays.MatchString(t):
		parts = []string{"FREQ=WEEKLY", "BYDAY=" + days(reEveryDays.FindStringSubmatch(t)[1])}
	default:
		return Repeat{}, kairos.Errorf(kairos.EINVALID, "repeat %q is neither an RRULE nor a form I know (e.g. \"every weekday at 8am\", \"every 2 weeks on Monday\", \"on the last day of every month\")", s)
	}
	if strings.HasPrefix(parts[0], "FREQ=WEEKLY") && len(parts) < 3 && !strings.Contains(strings.Join(parts, ";"), "BYDAY") {
		if m := reOnDays.FindStringSubmatch(t); m != nil {
			parts = append(parts, "BYDAY="+days(m[1]))
		}
	}
	if strings.HasPrefix(parts[0], "FREQ=MONTHLY") && !strings.Contains(strings.Join(parts, ";"), "BYMONTHDAY") {
		if m := reMonthDay.FindStringSubmatch(t); m != nil {
			d, _ := strconv.Atoi(m[1])
			if d < 1 || d > 31 {
				return Repeat{}, kairos.Errorf(kairos.EINVALID, "repeat %q: no day %d in a month", s, d)
			}
			parts = append(parts, "BYMONTHDAY="+strconv.Itoa(d))
		}
	}
	r := Repeat{RRule: strings.Join(parts, ";")}
	if m := reAt.FindStringSubmatch(t); m != nil {
		h, mi, err := clockOf(m)
		if err != nil {
			return Repeat{}, kairos.Errorf(kairos.EINVALID, "repeat %q: %v", s, err)
		}
		r.Hour, r.Minute, r.HasTime = h, mi, true
	}
	return r, nil
}

func freqOf(unit string) string {
	return map[string]string{"minute": "MINUTELY", "hour": "HOURLY", "day": "DAILY", "week": "WEEKLY", "month": "MONTHLY", "year": "YEARLY"}[unit]
}

func days(s string) string {
	var out []string
	seen := map[string]bool{}
	for _, d := range reDayName.FindAllStringSubmatch(s, -1) {
		c := dayCodes[d[1]]
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return strings.Join(out, ",")
}

func clockOf(m []string) (int, int, error) {
	switch m[4] {
	case "noon":
		return 12, 0, nil
	case "midnight":
		return 0, 0, nil
	}
	h, _ := strconv.Atoi(m[1])
	mi := 0
	if m[2] != "" {
		mi, _ = strconv.Atoi(m[2])
	}
	switch strings.ReplaceAll(m[3], ".", "") {
	case "am":
		if h < 1 || h > 12 {
			return 0, 0, fmt.Errorf("%d am is not a time", h)
		}
		if h == 12 {
			h = 0
		}
	case "pm":
		if h < 1 || h > 12 {
			return 0, 0, fmt.Errorf("%d pm is not a time", h)
		}
		if h != 12 {
			h += 12
		}
	}
	if h > 23 || mi > 59 {
		return 0, 0, fmt.Errorf("%02d:%02d is not a time", h, mi)
	}
	return h, mi, nil
}

// floating is a wall-clock time carried as UTC so that rrule-go's
// time.Date arithmetic sees no DST.
func floating(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

func resolve(loc *time.Location, w time.Time) time.Time {
	t, _ := calendar.ResolveLocal(loc, w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second())
	return t
}

// Occurrences returns the instants of rule (started at the wall-clock
// time start in loc) strictly after after, at most n of them. Expansion
// happens in wall time and each occurrence is resolved with the
// compatible rule: a time skipped by DST moves forward, a repeated one
// takes its first instant, and an instant is never returned twice. The
// cost does not grow with the rule's age (see Rule.Next); it is bounded
// in steps and time, and ends with ctx.
func Occurrences(ctx context.Context, rule string, start time.Time, loc *time.Location, after time.Time, n int) ([]time.Time, error) {
	r, err := Compile(rule, start)
	if err != nil {
		return nil, err
	}
	return r.Next(ctx, loc, after, n)
}

// MaxSkipped is the most passed-over occurrences NextRun counts.
const MaxSkipped = 1000

// NextRun returns the schedule's first occurrence strictly after after
// and how many occurrences from its current NextRun up to after were
// passed over (at most MaxSkipped); zero when the recurrence has ended
// or it is a one-off.
func NextRun(ctx context.Context, s *kairos.Schedule, after time.Time) (time.Time, int, error) {
	next, skipped, _, err := nextRun(ctx, s, after)
	return next, skipped, err
}

// nextRun is NextRun that also returns the rule to store from now on:
// a rule stored with a COUNT (before Inspect wrote COUNT as the UNTIL of
// its last occurrence) is converted once, so that it need not be expanded
// from its start on every tick; "" when the rule stays as it is. The rule
// is parsed and compiled once (twice for a COUNT rule: the rule, then its
// UNTIL form).
func nextRun(ctx context.Context, s *kairos.Schedule, after time.Time) (next time.Time, skipped int, until string, err error) {
	if s.RRule == "" {
		return time.Time{}, 0, "", nil
	}
	loc, err := time.LoadLocation(s.TZ)
	if err != nil {
		return time.Time{}, 0, "", kairos.Errorf(kairos.EINVALID, "schedule zone %q: %v", s.TZ, err)
	}
	start, err := time.Parse(WallLayout, s.Start)
	if err != nil {
		return time.Time{}, 0, "", kairos.Errorf(kairos.EINVALID, "schedule start %q: %v", s.Start, err)
	}
	r, err := Compile(s.RRule, start)
	if err != nil {
		return time.Time{}, 0, "", err
	}
	if r.opt.Count > 0 { // the same rule, movable
		if until, err = r.untilForm(ctx); err != nil || until == "" {
			return time.Time{}, 0, "", err
		}
		if r, err = Compile(until, start); err != nil {
			return time.Time{}, 0, "", err
		}
	}
	if s.NextRun.Before(after) {
		// A count cut short by the budget is still a count: the note says
		// "at least" as many, and the next run matters more.
		skipped, _ = r.Passed(ctx, loc, s.NextRun, after, MaxSkipped)
		if err := ctx.Err(); err != nil {
			return time.Time{}, 0, "", err
		}
	}
	occ, err := r.Next(ctx, loc, after, 1)
	if err != nil || len(occ) == 0 {
		return time.Time{}, skipped, "", err
	}
	return occ[0], skipped, until, nil
}
