package web

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/usage"
)

func TestNumbersPeopleRead(t *testing.T) {
	lisbon, _ := time.LoadLocation("Europe/Lisbon")
	ny, _ := time.LoadLocation("America/New_York")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ got, want string }{
		{USD(0), "$0.00"}, {USD(0.0004569), "$0.00046"}, {USD(0.0030459000000000003), "$0.0030"}, {USD(0.00999), "$0.01"},
		{USD(0.005), "$0.0050"}, {USD(1.2345), "$1.23"}, {USD(1234567.891), "$1,234,567.89"}, {USD(-2.5), "-$2.50"},
		{usage.Thousands(0), "0"}, {usage.Thousands(999), "999"}, {usage.Thousands(1000), "1,000"}, {usage.Thousands(-1234567), "-1,234,567"},
		{Millis(6.264), "6.3 ms"}, {Millis(840.4), "840 ms"}, {Millis(6264), "6.3 s"}, {Millis(0), "0 ms"},
		{Span(45 * time.Second), "45 s"}, {Span(8 * time.Minute), "8 min"}, {Span(3*time.Hour + 5*time.Minute), "3 h 5 min"},
		{Span(26 * time.Hour), "1 day 2 h"}, {Span(72 * time.Hour), "3 days"},
		{When(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), lisbon, now), "Sun 29 Nov, 09:00 Lisbon"},
		{When(time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC), ny, now), "Sun 29 Nov, 09:00 New York"},
		{When(time.Date(2025, 7, 4, 8, 30, 0, 0, time.UTC), lisbon, now), "Fri 4 Jul 2025, 09:30 Lisbon"},
		{When(time.Time{}, lisbon, now), "never"},
		{When(now, time.FixedZone("", 3*3600), now), "Sat 28 Nov, 15:00 +03"},
		{Relative(now.Add(10*time.Minute), now), "in 10 min"}, {Relative(now.Add(-3*time.Hour), now), "3 h ago"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// USD keeps two significant digits under a cent and rounds to the cent
// above, for any amount: never a long tail of digits, never off by more
// than the rounding.
func TestUSDRoundsEveryAmount(t *testing.T) {
	shape := regexp.MustCompile(`^\$(0\.00\d*[1-9]\d?|0\.0[1-9]|0\.[1-9]\d|[1-9]\d{0,2}(,\d{3})*\.\d\d)$`)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		v := math.Pow(10, r.Float64()*14-8) // 1e-8 … 1e6
		s := USD(v)
		if !shape.MatchString(s) {
			t.Fatalf("USD(%v) = %q", v, s)
		}
		back, _ := strconv.ParseFloat(strings.ReplaceAll(s[1:], ",", ""), 64)
		tol := 0.005
		if v < 0.01 {
			tol = math.Pow(10, math.Floor(math.Log10(v))-1) // half a unit of the second significant digit, with room
		}
		if math.Abs(back-v) > tol {
			t.Fatalf("USD(%v) = %q, off by %v", v, s, back-v)
		}
	}
}
