package kairos

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is an ISO-8601 duration (PnYnMnWnDTnHnMnS) with its parts
// kept apart, so that a caller can add days as calendar days in a zone
// (P1D across a DST change is 23 or 25 hours) or read it as an exact
// length with Approx. It is the one duration parser of the project: the
// policy decodes its duration keys into it (errors then carry the file's
// line and column), and the clock rules, the agent and the jobs read the
// decoded value.
type Duration struct {
	Years, Months, Weeks, Days, Hours, Minutes, Seconds float64
}

// MaxDuration is the longest duration ParseDuration accepts.
const MaxDuration = 100 * 365 * 24 * time.Hour

// ParseDuration parses an ISO-8601 duration: "P", then any of nY nM nW nD
// in that order, then optionally "T" and any of nH nM nS in that order, at
// least one unit in all and at least one after a "T". Numbers are decimal
// ("PT0.5S"). Empty, negative, lower-case and longer than 100 years
// (years and months counted as 365 and 365/12 days) are refused with an
// EINVALID error that quotes the input.
func ParseDuration(s string) (Duration, error) {
	var d Duration
	switch {
	case s == "":
		return d, Errorf(EINVALID, "empty duration")
	case strings.HasPrefix(s, "-"):
		return d, Errorf(EINVALID, "%q: a duration must not be negative", s)
	}
	bad := Errorf(EINVALID, "%q is not an ISO-8601 duration (e.g. P1D, PT2H, PT30M, P1W)", s)
	if s[0] != 'P' {
		return d, bad
	}
	datePart, timePart, hasT := strings.Cut(s[1:], "T")
	dateUnits := []struct {
		unit byte
		to   *float64
	}{{'Y', &d.Years}, {'M', &d.Months}, {'W', &d.Weeks}, {'D', &d.Days}}
	timeUnits := []struct {
		unit byte
		to   *float64
	}{{'H', &d.Hours}, {'M', &d.Minutes}, {'S', &d.Seconds}}
	n1, ok1 := readUnits(datePart, len(dateUnits), func(i int) byte { return dateUnits[i].unit }, func(i int, v float64) { *dateUnits[i].to = v })
	n2, ok2 := readUnits(timePart, len(timeUnits), func(i int) byte { return timeUnits[i].unit }, func(i int, v float64) { *timeUnits[i].to = v })
	if !ok1 || !ok2 || n1+n2 == 0 || (hasT && n2 == 0) {
		return Duration{}, bad
	}
	if h := d.hours(); math.IsNaN(h) || math.IsInf(h, 0) || h > MaxDuration.Hours() {
		return Duration{}, Errorf(EINVALID, "%q is longer than 100 years", s)
	}
	return d, nil
}

// readUnits reads "<number><unit>" pairs whose units follow the order
// unitAt(0), unitAt(1), …, each at most once; it returns how many it set.
func readUnits(s string, units int, unitAt func(int) byte, set func(int, float64)) (int, bool) {
	n, next := 0, 0
	for s != "" {
		end := 0
		for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
			end++
		}
		if end == 0 || end == len(s) || !decimal(s[:end]) {
			return 0, false
		}
		i := next
		for i < units && unitAt(i) != s[end] {
			i++
		}
		if i == units {
			return 0, false // unknown unit, or one out of order
		}
		v, err := strconv.ParseFloat(s[:end], 64)
		if err != nil {
			return 0, false
		}
		set(i, v)
		n, next, s = n+1, i+1, s[end+1:]
	}
	return n, true
}

// decimal reports whether s is digits with at most one '.' between digits.
func decimal(s string) bool {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || strings.Contains(frac, ".") || (hasDot && frac == "") {
		return false
	}
	return true
}

// MustDuration is ParseDuration for constants; it panics on a bad one.
func MustDuration(s string) Duration {
	d, err := ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// durationPtr is MustDuration for optional (pointer) policy keys.
func durationPtr(s string) *Duration {
	d := MustDuration(s)
	return &d
}

func (d Duration) hours() float64 {
	return d.Years*365*24 + d.Months*365*24/12 + d.Weeks*7*24 + d.Days*24 + d.Hours + d.Minutes/60 + d.Seconds/3600
}

// IsZero reports whether d is no time at all ("PT0S" or not given).
func (d Duration) IsZero() bool { return d == Duration{} }

// Approx is d as an exact length: weeks are 7 days, days 24 hours, years
// 365 days and months a twelfth of that. For calendar arithmetic in a zone
// use the parts (clockstate.AddISODuration).
func (d Duration) Approx() time.Duration {
	ns := func(v float64, unit time.Duration) time.Duration { return time.Duration(math.Round(v * float64(unit))) }
	day := 24 * time.Hour
	return ns(d.Years, 365*day) + ns(d.Months, 365*day/12) + ns(d.Weeks, 7*day) + ns(d.Days, day) +
		ns(d.Hours, time.Hour) + ns(d.Minutes, time.Minute) + ns(d.Seconds, time.Second)
}

// CalendarWhole reports whether the calendar parts (years, months, weeks,
// days) are whole numbers, so they can be added as calendar units.
func (d Duration) CalendarWhole() bool {
	for _, v := range []float64{d.Years, d.Months, d.Weeks, d.Days} {
		if v != math.Trunc(v) || v > 1e6 {
			return false
		}
	}
	return true
}

// String is the canonical ISO-8601 form ("PT0S" for zero).
func (d Duration) String() string {
	if d.IsZero() {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteByte('P')
	put := func(v float64, unit byte) {
		if v != 0 {
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
			b.WriteByte(unit)
		}
	}
	put(d.Years, 'Y')
	put(d.Months, 'M')
	put(d.Weeks, 'W')
	put(d.Days, 'D')
	if d.Hours != 0 || d.Minutes != 0 || d.Seconds != 0 {
		b.WriteByte('T')
		put(d.Hours, 'H')
		put(d.Minutes, 'M')
		put(d.Seconds, 'S')
	}
	return b.String()
}

// MarshalText writes the canonical form, so JSON and YAML show durations
// as operators write them.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses an ISO-8601 duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
