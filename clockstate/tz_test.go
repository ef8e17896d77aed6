package clockstate

import (
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := LoadTZ(name)
	if err != nil {
		t.Fatalf("LoadTZ(%q): %v", name, err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// §4.4 offset_minutes: DST-aware, fractional offsets kept in minutes (§2
// "Delta hours MAY be fractional… compare in minutes").
func TestSection4_4_OffsetMinutesDSTAndFractional(t *testing.T) {
	jan, jul := utc("2026-01-15T12:00:00Z"), utc("2026-07-15T12:00:00Z")
	for _, tc := range []struct {
		tz       string
		at       time.Time
		wantMins int
	}{
		{"UTC", jan, 0},
		{"Asia/Kolkata", jan, 330},
		{"Asia/Kolkata", jul, 330},
		{"Asia/Kathmandu", jan, 345},
		{"Australia/Lord_Howe", jan, 660}, // southern summer: half-hour DST
		{"Australia/Lord_Howe", jul, 630},
		{"Australia/Adelaide", jan, 630},
		{"Australia/Adelaide", jul, 570},
		{"America/St_Johns", jan, -210},
		{"America/St_Johns", jul, -150},
		{"Pacific/Chatham", jan, 825},
		{"Pacific/Chatham", jul, 765},
		{"Asia/Tehran", jan, 210},
		{"America/New_York", jan, -300},
		{"America/New_York", jul, -240},
		{"Europe/London", jan, 0},
		{"Europe/London", jul, 60},
		{"Etc/GMT-9", jan, 540},
		{"UTC+05:30", jan, 330},
	} {
		t.Run(tc.tz+"/"+tc.at.Month().String(), func(t *testing.T) {
			got, err := OffsetMinutes(tc.tz, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.wantMins {
				t.Errorf("OffsetMinutes(%s, %v) = %d, want %d", tc.tz, tc.at, got, tc.wantMins)
			}
		})
	}
}

// §4.2 delta_hours = Session TZ offset − Agent TZ offset, DST-aware, may be
// fractional.
func TestSection4_2_DeltaHours(t *testing.T) {
	for _, tc := range []struct {
		session, agent string
		at             time.Time
		want           int
	}{
		{"Asia/Tokyo", "Europe/Berlin", utc("2026-02-09T01:00:00Z"), 480}, // §10.2's example: 8
		{"Asia/Tokyo", "Europe/Berlin", utc("2026-07-09T01:00:00Z"), 420}, // Berlin in DST
		{"Asia/Kolkata", "UTC", utc("2026-02-09T01:00:00Z"), 330},         // +5.5
		{"Asia/Kathmandu", "UTC", utc("2026-02-09T01:00:00Z"), 345},       // +5.75
		{"America/New_York", "Asia/Kolkata", utc("2026-02-09T01:00:00Z"), -630},
	} {
		got, err := DeltaMinutes(tc.session, tc.agent, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("DeltaMinutes(%s, %s) = %d, want %d", tc.session, tc.agent, got, tc.want)
		}
	}
}

// §4.4 hard rule: IANA identifiers, never abbreviations.
func TestSection4_4_IANAOnly(t *testing.T) {
	for _, name := range []string{"EST", "CST", "PST", "IST", "Local", "", "Foo/Bar", "../etc/passwd", "UTC+25:00", "JST"} {
		if ValidTZ(name) {
			t.Errorf("ValidTZ(%q) = true, want false", name)
		}
	}
	for _, name := range []string{"UTC", "Asia/Tokyo", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC-03:30"} {
		if !ValidTZ(name) {
			t.Errorf("ValidTZ(%q) = false, want true", name)
		}
	}
}

// §4.4 to_iso: ISO-8601 with offset.
func TestSection4_4_ToISO(t *testing.T) {
	at := utc("2026-02-10T03:02:00Z")
	for _, tc := range []struct{ tz, want string }{
		{"Asia/Tokyo", "2026-02-10T12:02:00+09:00"},
		{"UTC", "2026-02-10T03:02:00+00:00"},
		{"Asia/Kathmandu", "2026-02-10T08:47:00+05:45"},
		{"America/St_Johns", "2026-02-09T23:32:00-03:30"},
	} {
		if got := ToISO(at, tc.tz); got != tc.want {
			t.Errorf("ToISO(%s) = %s, want %s", tc.tz, got, tc.want)
		}
	}
}

// DST rule (RFC 5545 / Temporal "compatible"): a skipped local time moves
// forward by the gap; a repeated one takes the earlier instant.
func TestSection4_4_ResolveLocalDSTCompatible(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tz       string
		y        int
		mo       time.Month
		d, h, mi int
		want     string
		kind     LocalKind
	}{
		{"new york gap", "America/New_York", 2026, time.March, 8, 2, 30, "2026-03-08T07:30:00Z", LocalSkipped},
		{"new york fold", "America/New_York", 2026, time.November, 1, 1, 30, "2026-11-01T05:30:00Z", LocalRepeated},
		{"new york normal", "America/New_York", 2026, time.March, 8, 9, 0, "2026-03-08T13:00:00Z", LocalExact},
		{"london gap", "Europe/London", 2026, time.March, 29, 1, 30, "2026-03-29T01:30:00Z", LocalSkipped},
		{"london fold", "Europe/London", 2026, time.October, 25, 1, 30, "2026-10-25T00:30:00Z", LocalRepeated},
		{"lord howe half-hour gap", "Australia/Lord_Howe", 2026, time.October, 4, 2, 15, "2026-10-03T15:45:00Z", LocalSkipped},
		{"lord howe half-hour fold", "Australia/Lord_Howe", 2026, time.April, 5, 1, 45, "2026-04-04T14:45:00Z", LocalRepeated},
		{"kolkata", "Asia/Kolkata", 2026, time.March, 8, 9, 0, "2026-03-08T03:30:00Z", LocalExact},
		{"kathmandu", "Asia/Kathmandu", 2026, time.March, 8, 9, 0, "2026-03-08T03:15:00Z", LocalExact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, kind := ResolveLocal(mustLoc(t, tc.tz), tc.y, tc.mo, tc.d, tc.h, tc.mi, 0)
			if !got.Equal(utc(tc.want)) || kind != tc.kind {
				t.Errorf("ResolveLocal = %v (kind %d), want %s (kind %d)", got.UTC(), kind, tc.want, tc.kind)
			}
		})
	}
}

// "Tomorrow 9am" across a DST change is calendar arithmetic, not +24 h.
func TestSection4_4_CalendarArithmeticAcrossDST(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	sat9 := time.Date(2026, 3, 7, 9, 0, 0, 0, ny)
	sun9 := AddCalendar(sat9, ny, 0, 0, 1)
	if got := sun9.In(ny).Format(ISOLayout); got != "2026-03-08T09:00:00-04:00" {
		t.Errorf("next day 9am = %s", got)
	}
	if d := sun9.Sub(sat9); d != 23*time.Hour {
		t.Errorf("calendar day across spring-forward = %v, want 23h", d)
	}
	// Month arithmetic clamps to the month's end (Temporal "constrain").
	jan31 := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	if got := AddCalendar(jan31, time.UTC, 0, 1, 0); !got.Equal(utc("2026-02-28T10:00:00Z")) {
		t.Errorf("Jan 31 + 1 month = %v", got)
	}
	if got := AddCalendar(jan31, time.UTC, 0, -2, 0); !got.Equal(utc("2025-11-30T10:00:00Z")) {
		t.Errorf("Jan 31 - 2 months = %v", got)
	}
}

func TestSection2_ElapsedISODuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "PT0S"},
		{-time.Hour, "PT0S"},
		{45 * time.Second, "PT45S"},
		{3*time.Hour + 15*time.Minute, "PT3H15M"},
		{3*time.Hour + 15*time.Minute + 20*time.Second, "PT3H15M"},
		{48 * time.Hour, "P2D"},
		{26 * time.Hour, "P1DT2H"},
		{45 * 24 * time.Hour, "P45D"}, // days, never months
		{time.Minute + 5*time.Second, "PT1M5S"},
	} {
		if got := FormatElapsed(tc.d); got != tc.want {
			t.Errorf("FormatElapsed(%v) = %s, want %s", tc.d, got, tc.want)
		}
	}
}

func TestSection0_ISODurationsCalendarAware(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	last := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	for _, tc := range []struct {
		spec string
		want time.Time
	}{
		{"P1D", time.Date(2026, 3, 8, 12, 0, 0, 0, ny)}, // 23 h of real time
		{"PT2H", last.Add(2 * time.Hour)},
		{"P2D", time.Date(2026, 3, 9, 12, 0, 0, 0, ny)},
		{"PT6H", last.Add(6 * time.Hour)},
		{"P30D", time.Date(2026, 4, 6, 12, 0, 0, 0, ny)},
		{"P1DT2H", time.Date(2026, 3, 8, 14, 0, 0, 0, ny)},
	} {
		d := kairos.MustDuration(tc.spec)
		if got := AddISODuration(last, d, ny); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.spec, got, tc.want)
		}
	}
}

// §4.2 Agent TZ: prefer the OS timezone, fall back to UTC.
func TestSection4_2_AgentTZFromOS(t *testing.T) {
	t.Setenv("TZ", "Asia/Kolkata")
	if got := DetectAgentTZ(); got != "Asia/Kolkata" {
		t.Errorf("DetectAgentTZ with TZ=Asia/Kolkata = %s", got)
	}
	t.Setenv("TZ", ":Europe/Berlin")
	if got := DetectAgentTZ(); got != "Europe/Berlin" {
		t.Errorf("DetectAgentTZ with TZ=:Europe/Berlin = %s", got)
	}
	t.Setenv("TZ", "")
	if got := DetectAgentTZ(); !ValidTZ(got) {
		t.Errorf("DetectAgentTZ fallback %q is not a valid zone", got)
	}
	if p := NewProvider(nil, nil, "Not/AZone"); !ValidTZ(p.AgentTimezone()) {
		t.Errorf("provider agent tz %q", p.AgentTimezone())
	}
}

func TestFixedOffsetTZ(t *testing.T) {
	for _, tc := range []struct {
		mins int
		want string
	}{{0, "UTC"}, {540, "Etc/GMT-9"}, {-300, "Etc/GMT+5"}, {330, "UTC+05:30"}, {-210, "UTC-03:30"}} {
		got := FixedOffsetTZ(tc.mins)
		if got != tc.want {
			t.Errorf("FixedOffsetTZ(%d) = %s, want %s", tc.mins, got, tc.want)
		}
		if off, err := OffsetMinutes(got, time.Now()); err != nil || off != tc.mins {
			t.Errorf("%s has offset %d (%v), want %d", got, off, err, tc.mins)
		}
	}
}
