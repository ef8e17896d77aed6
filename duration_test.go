package kairos_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want string // Approx().String(), or the start of the error message
	}{
		{"PT30M", "30m0s"}, {"PT2H", "2h0m0s"}, {"P1D", "24h0m0s"}, {"P1W", "168h0m0s"},
		{"P1DT1H", "25h0m0s"}, {"PT0.5S", "500ms"}, {"PT0S", "0s"}, {"P1Y", "8760h0m0s"}, {"P1M", "730h0m0s"},
		{"P1Y2M3W4DT5H6M7.5S", "10825h6m7.5s"}, {"PT90M", "1h30m0s"},
		{"", "empty duration"}, {"-P1D", `"-P1D": a duration must not be negative`},
		{"P", "not an ISO"}, {"PT", "not an ISO"}, {"P1DT", "not an ISO"}, {"1D", "not an ISO"}, {"p1d", "not an ISO"},
		{"P1H", "not an ISO"}, {"P1..5D", "not an ISO"}, {"P1.D", "not an ISO"}, {"P.5D", "not an ISO"}, {"PT1D", "not an ISO"},
		{"P1S", "not an ISO"}, {"P1D2Y", "not an ISO"}, {"P1D1D", "not an ISO"}, {"P1DT2H3H", "not an ISO"}, {"P 1D", "not an ISO"},
		{"P101Y", "longer than 100 years"}, {"PT99999999999999999999H", "longer than 100 years"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			d, err := kairos.ParseDuration(tc.in)
			if err != nil {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.want) {
					t.Fatalf("ParseDuration(%q) = %v, want %s", tc.in, err, tc.want)
				}
				return
			}
			if got := d.Approx().String(); got != tc.want {
				t.Fatalf("ParseDuration(%q).Approx() = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestDurationText(t *testing.T) {
	for in, want := range map[string]string{"PT30M": "PT30M", "P1DT2H": "P1DT2H", "PT0S": "PT0S", "P0D": "PT0S", "PT0.50S": "PT0.5S", "P2W": "P2W"} {
		d := kairos.MustDuration(in)
		if d.String() != want {
			t.Errorf("%s.String() = %s, want %s", in, d, want)
		}
		b, _ := json.Marshal(struct{ D kairos.Duration }{d})
		var back struct{ D kairos.Duration }
		if err := json.Unmarshal(b, &back); err != nil || back.D != d {
			t.Errorf("%s: JSON round trip %s gave %v, %v", in, b, back.D, err)
		}
	}
	var d kairos.Duration
	if err := d.UnmarshalText([]byte("soon")); err == nil {
		t.Error("UnmarshalText accepted soon")
	}
	if !kairos.MustDuration("P1D").CalendarWhole() || kairos.MustDuration("P1.5D").CalendarWhole() {
		t.Error("CalendarWhole")
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"P1D", "PT2H30M", "P1Y2M3W4DT5H6M7.5S", "PT0.5S", "P1..5D", "-P1D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := kairos.ParseDuration(s)
		if err != nil {
			return
		}
		if d.Approx() < 0 || d.Approx() > kairos.MaxDuration+kairos.MaxDuration/100 {
			t.Fatalf("%q: %v out of range", s, d.Approx())
		}
		again, err := kairos.ParseDuration(d.String())
		if err != nil || again != d {
			t.Fatalf("%q → %s → %v, %v", s, d, again, err)
		}
	})
}
