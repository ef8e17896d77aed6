package jobs_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/jobs"
)

func mustLoc(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func TestParseDivision(t *testing.T) {
	for _, tc := range []struct {
		kind, at string
		want     jobs.Division
		bad      bool
	}{
		{"", "", jobs.Division{Kind: jobs.DivideDaily}, false},
		{"daily", "00:00", jobs.Division{Kind: jobs.DivideDaily}, false},
		{"Weekly", "02:30", jobs.Division{Kind: jobs.DivideWeekly, Hour: 2, Minute: 30}, false},
		{"daily", "7:05", jobs.Division{Kind: jobs.DivideDaily, Hour: 7, Minute: 5}, false},
		{"none", "", jobs.Division{Kind: jobs.DivideNone}, false},
		{"hourly", "00:00", jobs.Division{}, true},
		{"daily", "24:00", jobs.Division{}, true},
		{"daily", "12:5", jobs.Division{}, true},
		{"daily", "noon", jobs.Division{}, true},
		{"daily", "-1:30", jobs.Division{}, true},
	} {
		t.Run(tc.kind+" "+tc.at, func(t *testing.T) {
			got, err := jobs.ParseDivision(kairos.SessionsPolicy{AutoDivide: tc.kind, AutoDivideTime: tc.at})
			if tc.bad {
				if kairos.ErrorCode(err) != kairos.EINVALID || got.Kind != jobs.DivideNone {
					t.Fatalf("got %+v, %v; want EINVALID and none", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestBoundary(t *testing.T) {
	tokyo := mustLoc(t, "Asia/Tokyo")
	la := mustLoc(t, "America/Los_Angeles")
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	daily := func(h, m int) jobs.Division { return jobs.Division{Kind: jobs.DivideDaily, Hour: h, Minute: m} }
	weekly := func(h, m int) jobs.Division { return jobs.Division{Kind: jobs.DivideWeekly, Hour: h, Minute: m} }
	for _, tc := range []struct {
		name      string
		div       jobs.Division
		loc       *time.Location
		at        string
		want      string // boundary, RFC 3339 UTC
		wantNext  string
		prevHours float64 // length of the division period ending at want, 0 = unchecked
	}{
		{"tokyo midnight exact", daily(0, 0), tokyo, "2026-03-04T15:00:00Z", "2026-03-04T15:00:00Z", "2026-03-05T15:00:00Z", 24},
		{"tokyo just before midnight", daily(0, 0), tokyo, "2026-03-04T14:59:59Z", "2026-03-03T15:00:00Z", "2026-03-04T15:00:00Z", 24},
		{"los angeles midnight", daily(0, 0), la, "2026-03-05T08:00:00Z", "2026-03-05T08:00:00Z", "2026-03-06T08:00:00Z", 24},
		// 2026-03-08: clocks jump 02:00 PST → 03:00 PDT; 02:30 does not
		// exist and moves forward to 03:30 PDT (10:30Z).
		{"spring forward, before the moved time", daily(2, 30), la, "2026-03-08T10:00:00Z", "2026-03-07T10:30:00Z", "2026-03-08T10:30:00Z", 24},
		{"spring forward, at the moved time", daily(2, 30), la, "2026-03-08T10:30:00Z", "2026-03-08T10:30:00Z", "2026-03-09T09:30:00Z", 24},
		{"day after spring forward", daily(2, 30), la, "2026-03-09T09:30:00Z", "2026-03-09T09:30:00Z", "2026-03-10T09:30:00Z", 23},
		// 2026-11-01: clocks fall back 02:00 PDT → 01:00 PST; 02:30
		// happens once (PST), the day before is 25 hours long.
		{"fall back 02:30", daily(2, 30), la, "2026-11-01T10:30:00Z", "2026-11-01T10:30:00Z", "2026-11-02T10:30:00Z", 25},
		{"fall back before 02:30", daily(2, 30), la, "2026-11-01T10:29:00Z", "2026-10-31T09:30:00Z", "2026-11-01T10:30:00Z", 24},
		// 01:30 happens twice on 2026-11-01: the earlier (PDT) counts.
		{"fall back fold takes earlier", daily(1, 30), la, "2026-11-01T08:45:00Z", "2026-11-01T08:30:00Z", "2026-11-02T09:30:00Z", 24},
		{"fall back second 01:30", daily(1, 30), la, "2026-11-01T09:30:00Z", "2026-11-01T08:30:00Z", "2026-11-02T09:30:00Z", 24},
		// Mondays: 2026-03-09 and 2026-03-16.
		{"weekly sunday night", weekly(0, 0), tokyo, "2026-03-15T14:59:00Z", "2026-03-08T15:00:00Z", "2026-03-15T15:00:00Z", 168},
		{"weekly monday midnight", weekly(0, 0), tokyo, "2026-03-15T15:00:00Z", "2026-03-15T15:00:00Z", "2026-03-22T15:00:00Z", 168},
		{"weekly across spring forward", weekly(2, 30), la, "2026-03-09T09:30:00Z", "2026-03-09T09:30:00Z", "2026-03-16T09:30:00Z", 167},
		{"weekly monday before the time", weekly(2, 30), la, "2026-03-16T09:29:00Z", "2026-03-09T09:30:00Z", "2026-03-16T09:30:00Z", 167},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := utc(tc.at)
			got := tc.div.Boundary(at, tc.loc)
			if !got.Equal(utc(tc.want)) {
				t.Errorf("Boundary(%s) = %s (%s), want %s", tc.at, got.UTC().Format(time.RFC3339), got, tc.want)
			}
			next := tc.div.Next(at, tc.loc)
			if !next.Equal(utc(tc.wantNext)) {
				t.Errorf("Next(%s) = %s (%s), want %s", tc.at, next.UTC().Format(time.RFC3339), next, tc.wantNext)
			}
			if tc.prevHours > 0 {
				prev := tc.div.Boundary(got.Add(-time.Nanosecond), tc.loc)
				if h := got.Sub(prev).Hours(); h != tc.prevHours {
					t.Errorf("period ending at %s lasted %vh (from %s), want %vh", got, h, prev, tc.prevHours)
				}
			}
		})
	}
	if b := (jobs.Division{Kind: jobs.DivideNone}).Boundary(utc("2026-03-08T10:00:00Z"), la); !b.IsZero() {
		t.Errorf("none has boundary %s", b)
	}
}

func TestLocalTime(t *testing.T) {
	la := mustLoc(t, "America/Los_Angeles")
	for _, tc := range []struct {
		name      string
		d, h, min int
		month     time.Month
		want      string
	}{
		{"ordinary", 5, 9, 0, time.March, "2026-03-05T17:00:00Z"},
		{"gap moves forward", 8, 2, 30, time.March, "2026-03-08T10:30:00Z"}, // 03:30 PDT
		{"gap start", 8, 2, 0, time.March, "2026-03-08T10:00:00Z"},          // 03:00 PDT
		{"fold takes earlier", 1, 1, 0, time.November, "2026-11-01T08:00:00Z"},
		{"after fold", 1, 2, 0, time.November, "2026-11-01T10:00:00Z"},
		{"day overflow", 32, 0, 0, time.October, "2026-11-01T07:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := jobs.LocalTime(la, 2026, tc.month, tc.d, tc.h, tc.min)
			if got.UTC().Format(time.RFC3339) != tc.want {
				t.Errorf("got %s (%s), want %s", got.UTC().Format(time.RFC3339), got, tc.want)
			}
		})
	}
}

func FuzzParseDivision(f *testing.F) {
	for _, s := range [][2]string{{"daily", "00:00"}, {"weekly", "23:59"}, {"none", ""}, {"daily", "7:5"}, {"", "99:99"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, kind, at string) {
		d, err := jobs.ParseDivision(kairos.SessionsPolicy{AutoDivide: kind, AutoDivideTime: at})
		if err != nil {
			if d.Kind != jobs.DivideNone {
				t.Fatalf("error with division %+v", d)
			}
			return
		}
		if d.Hour < 0 || d.Hour > 23 || d.Minute < 0 || d.Minute > 59 {
			t.Fatalf("out of range %+v", d)
		}
		_ = d.String()
	})
}

// FuzzBoundary checks the boundary invariants in zones with DST: the
// boundary is at or before t, the next one after t, the next one is its
// own boundary, and no boundary lies between them.
func FuzzBoundary(f *testing.F) {
	zones := []string{"America/Los_Angeles", "Asia/Tokyo", "Europe/London", "Australia/Lord_Howe", "America/Santiago", "UTC"}
	f.Add(int64(1772964000), uint8(0), uint8(2), uint8(30), false)
	f.Add(int64(1793500000), uint8(2), uint8(1), uint8(30), true)
	f.Fuzz(func(t *testing.T, sec int64, zone, h, m uint8, weekly bool) {
		sec = sec % (200 * 365 * 86400) // within a few centuries of 1970
		loc := mustLoc(t, zones[int(zone)%len(zones)])
		d := jobs.Division{Kind: jobs.DivideDaily, Hour: int(h) % 24, Minute: int(m) % 60}
		if weekly {
			d.Kind = jobs.DivideWeekly
		}
		at := time.Unix(sec, 0)
		b := d.Boundary(at, loc)
		n := d.Next(at, loc)
		if b.After(at) || !n.After(at) {
			t.Fatalf("%s %v: boundary %s, next %s around %s", loc, d, b, n, at)
		}
		if !d.Boundary(n, loc).Equal(n) {
			t.Fatalf("%s %v: next %s is not its own boundary (%s)", loc, d, n, d.Boundary(n, loc))
		}
		if got := d.Boundary(n.Add(-time.Nanosecond), loc); !got.Equal(b) {
			t.Fatalf("%s %v: a boundary %s lies between %s and %s", loc, d, got, b, n)
		}
		if span := n.Sub(b); span > 8*24*time.Hour || span < 20*time.Hour {
			t.Fatalf("%s %v: period %s..%s lasts %s", loc, d, b, n, span)
		}
	})
}

func ExampleDivision_Boundary() {
	la, _ := time.LoadLocation("America/Los_Angeles")
	d := jobs.Division{Kind: jobs.DivideDaily, Hour: 2, Minute: 30}
	// On 2026-03-08 02:30 does not exist in Los Angeles; the division
	// happens at 03:30 PDT instead.
	at := time.Date(2026, 3, 8, 12, 0, 0, 0, la)
	fmt.Println(d.Boundary(at, la).Format(time.RFC3339))
	fmt.Println(d.Next(at, la).Format(time.RFC3339))
	// Output:
	// 2026-03-08T03:30:00-07:00
	// 2026-03-09T02:30:00-07:00
}
