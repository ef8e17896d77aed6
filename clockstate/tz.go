package clockstate

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // IANA data even on hosts without /usr/share/zoneinfo

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
)

// ISOLayout is ISO-8601 with a numeric offset; UTC prints as +00:00 so
// every rendered instant carries an explicit offset (§4.4 to_iso).
const ISOLayout = "2006-01-02T15:04:05-07:00"

var locCache sync.Map // name -> *time.Location

// LoadTZ loads a timezone by its IANA name ("Asia/Tokyo", "UTC",
// "Etc/GMT-9") or by a fixed-offset label of the form "UTC+05:30" (used
// only for offsets that no Etc/ zone names). Abbreviations (EST, CST, IST)
// and "Local" are refused: §4.4 requires IANA identifiers.
func LoadTZ(name string) (*time.Location, error) {
	if v, ok := locCache.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := loadTZ(name)
	if err != nil {
		return nil, err
	}
	locCache.Store(name, loc)
	return loc, nil
}

func loadTZ(name string) (*time.Location, error) {
	switch {
	case name == "UTC":
		return time.UTC, nil
	case strings.HasPrefix(name, "UTC+") || strings.HasPrefix(name, "UTC-"):
		mins, ok := parseOffsetLabel(name[3:])
		if !ok {
			return nil, kairos.Errorf(kairos.EINVALID, "Unknown timezone %q: use an IANA name such as Asia/Tokyo.", name)
		}
		return time.FixedZone(name, mins*60), nil
	case !strings.Contains(name, "/") || strings.Contains(name, "..") || strings.HasPrefix(name, "/") || len(name) > 64:
		return nil, kairos.Errorf(kairos.EINVALID, "Unknown timezone %q: use an IANA name such as Asia/Tokyo (abbreviations like EST are ambiguous).", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "Unknown timezone %q: use an IANA name such as Asia/Tokyo.", name)
	}
	return loc, nil
}

// parseOffsetLabel reads "+05:30" / "-3" / "+0545" as minutes east of UTC.
func parseOffsetLabel(s string) (int, bool) {
	if len(s) < 2 {
		return 0, false
	}
	sign := 1
	switch s[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	s = s[1:]
	var h, m int
	var err error
	switch {
	case strings.Contains(s, ":"):
		hs, ms, _ := strings.Cut(s, ":")
		if h, err = strconv.Atoi(hs); err != nil || len(hs) > 2 {
			return 0, false
		}
		if m, err = strconv.Atoi(ms); err != nil || len(ms) != 2 {
			return 0, false
		}
	case len(s) == 4:
		if h, err = strconv.Atoi(s[:2]); err != nil {
			return 0, false
		}
		if m, err = strconv.Atoi(s[2:]); err != nil {
			return 0, false
		}
	case len(s) <= 2:
		if h, err = strconv.Atoi(s); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if h > 14 || m > 59 || (h == 14 && m > 0) {
		return 0, false
	}
	return sign * (h*60 + m), true
}

// ValidTZ reports whether name is a timezone LoadTZ accepts.
func ValidTZ(name string) bool {
	_, err := LoadTZ(name)
	return err == nil
}

// FixedOffsetTZ names a fixed UTC offset: "UTC" for zero, the IANA
// Etc/GMT∓N zone for whole hours (POSIX-inverted sign: UTC+9 is
// Etc/GMT-9), and a "UTC+05:30" label otherwise.
func FixedOffsetTZ(minutes int) string {
	if minutes == 0 {
		return "UTC"
	}
	if minutes%60 == 0 && minutes >= -12*60 && minutes <= 14*60 {
		h := minutes / 60
		if h > 0 {
			return "Etc/GMT-" + strconv.Itoa(h)
		}
		return "Etc/GMT+" + strconv.Itoa(-h)
	}
	sign := "+"
	if minutes < 0 {
		sign = "-"
		minutes = -minutes
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, minutes/60, minutes%60)
}

// OffsetMinutes is the DST-aware UTC offset of tz at instant, in minutes
// (Asia/Kolkata +330, Asia/Kathmandu +345).
func OffsetMinutes(tz string, instant time.Time) (int, error) {
	loc, err := LoadTZ(tz)
	if err != nil {
		return 0, err
	}
	_, off := instant.In(loc).Zone()
	return off / 60, nil
}

// DeltaMinutes is §4.2's delta (Session TZ offset − Agent TZ offset) at
// instant, in minutes; delta_hours is this over 60 and may be fractional.
func DeltaMinutes(sessionTZ, agentTZ string, instant time.Time) (int, error) {
	s, err := OffsetMinutes(sessionTZ, instant)
	if err != nil {
		return 0, err
	}
	a, err := OffsetMinutes(agentTZ, instant)
	if err != nil {
		return 0, err
	}
	return s - a, nil
}

// ToISO renders instant in tz as ISO-8601 with offset, e.g.
// 2026-02-10T12:02:00+09:00 (UTC renders +00:00). An unknown tz is
// rendered in UTC.
func ToISO(instant time.Time, tz string) string {
	loc, err := LoadTZ(tz)
	if err != nil {
		loc = time.UTC
	}
	return instant.In(loc).Format(ISOLayout)
}

// LocalKind, ResolveLocal and AddCalendar are the root's (calendar.ResolveLocal
// holds the DST rule); these names keep the clock package's API.
type LocalKind = calendar.LocalKind

// Local kinds.
const (
	LocalExact    = calendar.LocalExact
	LocalSkipped  = calendar.LocalSkipped
	LocalRepeated = calendar.LocalRepeated
)

// ResolveLocal is calendar.ResolveLocal.
func ResolveLocal(loc *time.Location, year int, month time.Month, day, hour, min, sec int) (time.Time, LocalKind) {
	return calendar.ResolveLocal(loc, year, month, day, hour, min, sec)
}

// AddCalendar is calendar.AddCalendar.
func AddCalendar(t time.Time, loc *time.Location, years, months, days int) time.Time {
	return calendar.AddCalendar(t, loc, years, months, days)
}

// AddISODuration adds d to t: whole years, months, weeks and days as
// calendar units in loc (DST-aware, RFC 5545 style), the rest as exact
// time. Fractional calendar units fall back to exact time.
func AddISODuration(t time.Time, d kairos.Duration, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	if !d.CalendarWhole() {
		return t.Add(d.Approx())
	}
	r := t
	if d.Years != 0 || d.Months != 0 || d.Weeks != 0 || d.Days != 0 {
		r = AddCalendar(t, loc, int(d.Years), int(d.Months), int(d.Weeks)*7+int(d.Days))
	}
	return r.Add(time.Duration(math.Round((d.Hours*3600 + d.Minutes*60 + d.Seconds) * 1e9)))
}

// FormatElapsed renders an elapsed time as a normalised ISO-8601 duration
// in days, hours, minutes and seconds (never months: a month has no fixed
// length): P2D, PT3H15M, P1DT2H, PT45S, PT0S. Seconds are dropped once the
// duration reaches an hour; negative durations render as PT0S.
func FormatElapsed(d time.Duration) string {
	if d < time.Second {
		return "PT0S"
	}
	if d >= time.Hour {
		d = d.Truncate(time.Minute)
	} else {
		d = d.Truncate(time.Second)
	}
	days := int64(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	h := int64(d / time.Hour)
	d -= time.Duration(h) * time.Hour
	m := int64(d / time.Minute)
	d -= time.Duration(m) * time.Minute
	s := int64(d / time.Second)
	var b strings.Builder
	b.WriteByte('P')
	if days > 0 {
		b.WriteString(strconv.FormatInt(days, 10))
		b.WriteByte('D')
	}
	if h > 0 || m > 0 || s > 0 {
		b.WriteByte('T')
		if h > 0 {
			b.WriteString(strconv.FormatInt(h, 10))
			b.WriteByte('H')
		}
		if m > 0 {
			b.WriteString(strconv.FormatInt(m, 10))
			b.WriteByte('M')
		}
		if s > 0 {
			b.WriteString(strconv.FormatInt(s, 10))
			b.WriteByte('S')
		}
	}
	return b.String()
}

// DetectAgentTZ returns the host's IANA timezone (§4.2 Agent TZ: prefer the
// OS timezone, fall back to UTC): $TZ, then the /etc/localtime link, then
// /etc/timezone.
func DetectAgentTZ() string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if i := strings.Index(tz, "zoneinfo/"); i >= 0 {
			tz = tz[i+len("zoneinfo/"):]
		}
		if ValidTZ(tz) {
			return tz
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			if tz := target[i+len("zoneinfo/"):]; ValidTZ(tz) {
				return normalizeUTC(tz)
			}
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if tz := strings.TrimSpace(string(b)); ValidTZ(tz) {
			return normalizeUTC(tz)
		}
	}
	return "UTC"
}

func normalizeUTC(tz string) string {
	switch tz {
	case "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "Etc/GMT", "Etc/GMT+0", "Etc/GMT-0", "Etc/GMT0", "Etc/Greenwich":
		return "UTC"
	}
	return tz
}

func daysIn(y int, m time.Month) int { return calendar.DaysIn(y, m) }
