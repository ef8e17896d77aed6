package kairos

import (
	"fmt"
	"strconv"
	"time"
)

// PeriodKey returns the calendar-aligned period key of summaryType that
// contains t, in t's location: YYYY-MM-DD for conversation and daily
// summaries, the ISO week YYYY-Www (Monday to Sunday) for weekly ones,
// YYYY-MM, YYYY-Qn and YYYY for monthly, quarterly and yearly ones. It
// returns "" for an unknown summary type.
func PeriodKey(summaryType string, t time.Time) string {
	switch summaryType {
	case SummaryConversation, SummaryDaily:
		return t.Format("2006-01-02")
	case SummaryWeekly:
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case SummaryMonthly:
		return t.Format("2006-01")
	case SummaryQuarterly:
		return fmt.Sprintf("%04d-Q%d", t.Year(), (int(t.Month())-1)/3+1)
	case SummaryYearly:
		return fmt.Sprintf("%04d", t.Year())
	}
	return ""
}

// Period key shapes.
const (
	shapeDay     = "YYYY-MM-DD"
	shapeWeek    = "YYYY-Www"
	shapeMonth   = "YYYY-MM"
	shapeQuarter = "YYYY-Qn"
	shapeYear    = "YYYY"
)

// keyShape returns the shape a summary type's period keys have.
func keyShape(summaryType string) string {
	switch summaryType {
	case SummaryConversation, SummaryDaily:
		return shapeDay
	case SummaryWeekly:
		return shapeWeek
	case SummaryMonthly:
		return shapeMonth
	case SummaryQuarterly:
		return shapeQuarter
	case SummaryYearly:
		return shapeYear
	}
	return ""
}

// CheckPeriodKey reports whether key is a valid period key for
// summaryType (an existing calendar day, an ISO week the year has, a
// quarter 1–4, …), as a EINVALID error that says what was expected.
func CheckPeriodKey(summaryType, key string) error {
	shape := keyShape(summaryType)
	if shape == "" {
		return Errorf(EINVALID, "unknown summary type %q", summaryType)
	}
	got, _, _, err := parsePeriod(key)
	if err != nil || got != shape {
		return Errorf(EINVALID, "argument \"period_key\": %q is not a valid %s key for %s", key, shape, summaryType)
	}
	return nil
}

// PeriodRange returns the half-open interval [start, end) that a period
// key (any of the five shapes) covers in loc; a nil loc means UTC. Weeks
// are ISO weeks, Monday 00:00 to the next Monday 00:00.
func PeriodRange(key string, loc *time.Location) (start, end time.Time, err error) {
	if loc == nil {
		loc = time.UTC
	}
	shape, y, n, err := parsePeriod(key)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	switch shape {
	case shapeDay:
		start = time.Date(y, time.Month(n/100), n%100, 0, 0, 0, 0, loc)
		end = start.AddDate(0, 0, 1)
	case shapeWeek:
		start = isoWeekMonday(y, n, loc)
		end = start.AddDate(0, 0, 7)
	case shapeMonth:
		start = time.Date(y, time.Month(n), 1, 0, 0, 0, 0, loc)
		end = start.AddDate(0, 1, 0)
	case shapeQuarter:
		start = time.Date(y, time.Month(3*(n-1)+1), 1, 0, 0, 0, 0, loc)
		end = start.AddDate(0, 3, 0)
	case shapeYear:
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

// parsePeriod recognises a period key. n is MMDD for days, the week,
// month or quarter number otherwise.
func parsePeriod(key string) (shape string, year, n int, err error) {
	bad := func() (string, int, int, error) {
		return "", 0, 0, Errorf(EINVALID, "%q is not a period key (YYYY-MM-DD, YYYY-Www, YYYY-MM, YYYY-Qn or YYYY)", key)
	}
	if len(key) < 4 {
		return bad()
	}
	year, ok := digits(key[:4])
	if !ok || year < 1 {
		return bad()
	}
	rest := key[4:]
	switch {
	case rest == "":
		return shapeYear, year, 0, nil
	case len(rest) == 3 && rest[:2] == "-Q":
		q, ok := digits(rest[2:])
		if !ok || q < 1 || q > 4 {
			return bad()
		}
		return shapeQuarter, year, q, nil
	case len(rest) == 4 && rest[:2] == "-W":
		w, ok := digits(rest[2:])
		if !ok || w < 1 || w > 53 {
			return bad()
		}
		if y, ww := isoWeekMonday(year, w, time.UTC).ISOWeek(); y != year || ww != w {
			return bad() // week 53 of a year with 52 weeks
		}
		return shapeWeek, year, w, nil
	case len(rest) == 3 && rest[0] == '-':
		m, ok := digits(rest[1:])
		if !ok || m < 1 || m > 12 {
			return bad()
		}
		return shapeMonth, year, m, nil
	case len(rest) == 6 && rest[0] == '-' && rest[3] == '-':
		m, ok1 := digits(rest[1:3])
		d, ok2 := digits(rest[4:])
		if !ok1 || !ok2 || m < 1 || m > 12 || d < 1 {
			return bad()
		}
		if t := time.Date(year, time.Month(m), d, 0, 0, 0, 0, time.UTC); t.Day() != d {
			return bad() // 2026-02-30
		}
		return shapeDay, year, m*100 + d, nil
	}
	return bad()
}

// digits parses an all-ASCII-digit string.
func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
