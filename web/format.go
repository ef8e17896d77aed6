package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos/usage"
)

// The numbers people read: money in dollars to the cent (two significant
// digits under a cent), counts with thousands separators, durations with
// their unit, times in the operator's zone with the date written out.

// USD writes dollars: "$1,234.57", "$0.05", "$0.00046" (under a cent,
// two significant digits), "$0.00" for nothing.
func USD(v float64) string {
	neg := v < 0
	v = math.Abs(v)
	var s string
	switch {
	case v == 0:
		s = "$0.00"
	case v < 0.01:
		// Two significant digits: 0.0004569 has its first at the fourth
		// decimal, so it is written with five.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 1, 64), 64) // 0.000998 → 0.0010
		digits := 1 - int(math.Floor(math.Log10(r)))
		s = "$" + strconv.FormatFloat(r, 'f', digits, 64)
		if r, _ := strconv.ParseFloat(s[1:], 64); r >= 0.01 { // 0.00999 rounds up to a cent
			s = "$0.01"
		}
	default:
		cents := int64(math.Round(v * 100))
		s = fmt.Sprintf("$%s.%02d", usage.Thousands(cents/100), cents%100)
	}
	if neg && v != 0 {
		return "-" + s
	}
	return s
}

// Millis writes a latency in milliseconds: "840 ms", "6.3 s".
func Millis(ms float64) string {
	switch {
	case ms <= 0:
		return "0 ms"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(math.Round(ms), 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
}

// Span writes a duration in the two largest units that matter: "45 s",
// "8 min", "3 h 5 min", "2 days 4 h".
func Span(d time.Duration) string {
	d = d.Abs()
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	d = d.Round(time.Hour)
	days, h := int(d.Hours())/24, int(d.Hours())%24
	unit := "days"
	if days == 1 {
		unit = "day"
	}
	if h == 0 {
		return fmt.Sprintf("%d %s", days, unit)
	}
	return fmt.Sprintf("%d %s %d h", days, unit, h)
}

// ZoneName is how a zone is written after a time: the city of an IANA
// name ("Europe/Lisbon" → "Lisbon", "America/New_York" → "New York"),
// else the zone's abbreviation at t ("UTC", "+03").
func ZoneName(loc *time.Location, t time.Time) string {
	name := loc.String()
	if i := strings.LastIndexByte(name, '/'); i >= 0 && !strings.HasPrefix(name, "Etc/") {
		return strings.ReplaceAll(name[i+1:], "_", " ")
	}
	if name == "Local" {
		return "UTC"
	}
	abbr, _ := t.In(loc).Zone()
	if abbr == "" { // a fixed offset without a name
		return strings.TrimSuffix(t.In(loc).Format("-07:00"), ":00")
	}
	return abbr
}

// When writes an instant in loc with the date written out: "Sat 29 Nov,
// 09:00 Lisbon", with the year when it is not now's ("Fri 28 Nov 2025,
// …"); "never" for the zero time.
func When(t time.Time, loc *time.Location, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	if loc == nil {
		loc = time.UTC
	}
	l := t.In(loc)
	layout := "Mon 2 Jan, 15:04"
	if l.Year() != now.In(loc).Year() {
		layout = "Mon 2 Jan 2006, 15:04"
	}
	return l.Format(layout) + " " + ZoneName(loc, t)
}

// Relative writes how far t is from now: "in 8 min", "3 h ago".
func Relative(t, now time.Time) string {
	if t.After(now) {
		return "in " + Span(t.Sub(now))
	}
	return Span(now.Sub(t)) + " ago"
}
