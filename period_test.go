package kairos_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }

func TestPeriodKey(t *testing.T) {
	tests := []struct {
		typ  string
		at   time.Time
		want string
	}{
		{kairos.SummaryWeekly, date(2026, 12, 31), "2026-W53"},
		{kairos.SummaryWeekly, date(2027, 1, 1), "2026-W53"},
		{kairos.SummaryWeekly, date(2027, 1, 3), "2026-W53"},
		{kairos.SummaryWeekly, date(2027, 1, 4), "2027-W01"},
		{kairos.SummaryWeekly, date(2024, 12, 30), "2025-W01"},
		{kairos.SummaryWeekly, date(2024, 12, 29), "2024-W52"},
		{kairos.SummaryWeekly, date(2021, 1, 3), "2020-W53"},
		{kairos.SummaryWeekly, date(2026, 3, 9), "2026-W11"},
		{kairos.SummaryDaily, date(2026, 2, 28), "2026-02-28"},
		{kairos.SummaryConversation, date(2026, 2, 28), "2026-02-28"},
		{kairos.SummaryMonthly, date(2026, 2, 28), "2026-02"},
		{kairos.SummaryQuarterly, date(2026, 3, 31), "2026-Q1"},
		{kairos.SummaryQuarterly, date(2026, 4, 1), "2026-Q2"},
		{kairos.SummaryQuarterly, date(2026, 12, 31), "2026-Q4"},
		{kairos.SummaryYearly, date(2026, 12, 31), "2026"},
		{"hourly-summary", date(2026, 1, 1), ""},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.at.Format("2006-01-02"), func(t *testing.T) {
			if got := calendar.PeriodKey(tc.typ, tc.at); got != tc.want {
				t.Errorf("PeriodKey = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPeriodKeyUsesLocation(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	// Sunday 2026-03-08 20:00 UTC is Monday 05:00 in Tokyo.
	at := time.Date(2026, 3, 8, 20, 0, 0, 0, time.UTC)
	if got := calendar.PeriodKey(kairos.SummaryWeekly, at); got != "2026-W10" {
		t.Errorf("UTC week = %q", got)
	}
	if got := calendar.PeriodKey(kairos.SummaryWeekly, at.In(tokyo)); got != "2026-W11" {
		t.Errorf("Tokyo week = %q", got)
	}
}

func TestPeriodRange(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	tests := []struct {
		key        string
		loc        *time.Location
		start, end string
	}{
		{"2026-W53", nil, "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"},
		{"2025-W01", nil, "2024-12-30T00:00:00Z", "2025-01-06T00:00:00Z"},
		{"2020-W53", nil, "2020-12-28T00:00:00Z", "2021-01-04T00:00:00Z"},
		{"2026-W01", nil, "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z"},
		{"2024-02-29", nil, "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"},
		{"2026-02", nil, "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{"2026-Q4", nil, "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"2026", nil, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		// The day of the spring DST change in Berlin has 23 hours.
		{"2026-03-29", berlin, "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			start, end, err := calendar.PeriodRange(tc.key, tc.loc)
			if err != nil {
				t.Fatal(err)
			}
			if s, e := start.Format(time.RFC3339), end.Format(time.RFC3339); s != tc.start || e != tc.end {
				t.Errorf("PeriodRange = [%s, %s), want [%s, %s)", s, e, tc.start, tc.end)
			}
		})
	}
}

func TestCheckPeriodKey(t *testing.T) {
	tests := []struct {
		typ, key string
		ok       bool
	}{
		{kairos.SummaryDaily, "2026-03-09", true},
		{kairos.SummaryConversation, "2026-03-09", true},
		{kairos.SummaryDaily, "2026-02-29", false},
		{kairos.SummaryDaily, "2024-02-29", true},
		{kairos.SummaryDaily, "2026-3-9", false},
		{kairos.SummaryDaily, "2026-03", false},
		{kairos.SummaryWeekly, "2026-W53", true},
		{kairos.SummaryWeekly, "2025-W53", false},
		{kairos.SummaryWeekly, "2026-W00", false},
		{kairos.SummaryWeekly, "2026-w10", false},
		{kairos.SummaryWeekly, "2026-W1", false},
		{kairos.SummaryMonthly, "2026-12", true},
		{kairos.SummaryMonthly, "2026-13", false},
		{kairos.SummaryQuarterly, "2026-Q4", true},
		{kairos.SummaryQuarterly, "2026-Q5", false},
		{kairos.SummaryYearly, "2026", true},
		{kairos.SummaryYearly, "0000", false},
		{kairos.SummaryYearly, "26", false},
		{kairos.SummaryYearly, "2026-01", false},
		{kairos.SummaryMonthly, " 2026-01", false},
		{kairos.SummaryDaily, "２０２６-01-01", false},
		{"weird", "2026", false},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.key, func(t *testing.T) {
			err := kairos.CheckPeriodKey(tc.typ, tc.key)
			if tc.ok != (err == nil) {
				t.Fatalf("CheckPeriodKey = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && (kairos.ErrorCode(err) != kairos.EINVALID || (!strings.Contains(kairos.ErrorMessage(err), tc.key) && !strings.Contains(kairos.ErrorMessage(err), tc.typ))) {
				t.Errorf("error %v should be EINVALID and name the key or type", err)
			}
		})
	}
}

// Every key PeriodKey makes is valid for its type, and its range holds the
// instant it was made from.
func TestPeriodKeyRoundTrip(t *testing.T) {
	at := time.Date(2019, 12, 20, 23, 30, 0, 0, time.UTC)
	for i := 0; i < 3*366; i++ {
		at = at.Add(24 * time.Hour)
		for _, typ := range kairos.SummaryTypes {
			key := calendar.PeriodKey(typ, at)
			if err := kairos.CheckPeriodKey(typ, key); err != nil {
				t.Fatalf("%s %s: %v", typ, key, err)
			}
			start, end, err := calendar.PeriodRange(key, time.UTC)
			if err != nil || at.Before(start) || !at.Before(end) {
				t.Fatalf("%s at %s: key %s range [%s, %s) err %v", typ, at, key, start, end, err)
			}
		}
	}
}

func FuzzPeriodRange(f *testing.F) {
	for _, s := range []string{"2026-W53", "2026-02-29", "2026-Q0", "9999-12-31", "0001", "2026-", "2026-W5x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		start, end, err := calendar.PeriodRange(key, time.UTC)
		if err != nil {
			return
		}
		if !start.Before(end) {
			t.Fatalf("%q: empty range [%s, %s)", key, start, end)
		}
		ok := false
		for _, typ := range kairos.SummaryTypes {
			if kairos.CheckPeriodKey(typ, key) == nil && calendar.PeriodKey(typ, start) == key {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("%q parses but does not round-trip", key)
		}
	})
}

func ExamplePeriodKey() {
	at := time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC) // a Friday
	for _, typ := range kairos.SummaryTypes {
		fmt.Println(typ, calendar.PeriodKey(typ, at))
	}
	// Output:
	// conversation-summary 2027-01-01
	// daily-summary 2027-01-01
	// weekly-summary 2026-W53
	// monthly-summary 2027-01
	// quarterly-summary 2027-Q1
	// yearly-summary 2027
}

func ExamplePeriodRange() {
	start, end, _ := calendar.PeriodRange("2025-W01", time.UTC)
	fmt.Println(start.Format(time.DateOnly), "to", end.Format(time.DateOnly), "(exclusive)")
	// Output: 2024-12-30 to 2025-01-06 (exclusive)
}
