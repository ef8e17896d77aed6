package clockstate

import (
	"reflect"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// §5.1 / §9: the default rules of §0, evaluated in order.
func TestSection5_1_DefaultCheckinRules(t *testing.T) {
	rules := kairos.DefaultPolicy().Clock.Checkins.Rules
	at := utc("2026-02-10T03:02:00Z")
	for _, tc := range []struct {
		name    string
		kind    string
		gap     time.Duration // 0: first interaction
		open    bool
		actions []string
	}{
		{"first message fires nothing", kairos.ThreadKindProject, 0, true, nil},
		{"project under a day", kairos.ThreadKindProject, 23 * time.Hour, false, nil},
		{"project_gap_1d", kairos.ThreadKindProject, 25 * time.Hour, false, []string{CheckinAskForUpdates}},
		{"conversation after a day", kairos.ThreadKindConversation, 25 * time.Hour, false, nil},
		{"unset kind is conversation", "", 25 * time.Hour, false, nil},
		{"action_gap_2h", kairos.ThreadKindConversation, 2 * time.Hour, true, []string{CheckinAllowHedgedReference}},
		{"open action short gap", kairos.ThreadKindConversation, 119 * time.Minute, true, nil},
		{"long_gap_30d", kairos.ThreadKindConversation, 30 * 24 * time.Hour, false, []string{CheckinOfferRecap}},
		{"all three in rule order", kairos.ThreadKindProject, 31 * 24 * time.Hour, true, []string{CheckinAskForUpdates, CheckinAllowHedgedReference, CheckinOfferRecap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := CheckinInput{ThreadKind: tc.kind, At: at, HasOpenAction: tc.open}
			if tc.gap > 0 {
				in.Last = at.Add(-tc.gap)
			}
			out := EvaluateCheckins(rules, in)
			if !reflect.DeepEqual(out.Actions, tc.actions) {
				t.Errorf("actions = %v, want %v", out.Actions, tc.actions)
			}
			for _, a := range out.Actions {
				if out.By[a] == "" {
					t.Errorf("action %s has no rule id", a)
				}
			}
		})
	}
}

// Users can change durations (P2D, PT6H) and add any-channel conditions.
// (A bad duration never reaches the rules: the policy decoder refuses it
// with its line and column; see policy/load_test.go.)
func TestSection0_CustomCheckinRules(t *testing.T) {
	yes := true
	rules := []kairos.CheckinRule{
		{ID: "six_hours", When: kairos.CheckinWhen{ElapsedGTE: dur("PT6H")}, Then: kairos.CheckinThen{AskForUpdates: true}},
		{ID: "away_2d", When: kairos.CheckinWhen{ElapsedAnyChannelGTE: dur("P2D")}, Then: kairos.CheckinThen{OfferRecap: true}},
		{ID: "open", When: kairos.CheckinWhen{HasOpenAction: &yes}, Then: kairos.CheckinThen{AllowHedgedReference: true}},
	}
	at := utc("2026-02-10T03:02:00Z")
	out := EvaluateCheckins(rules, CheckinInput{At: at, Last: at.Add(-7 * time.Hour), LastAnyChannel: at.Add(-time.Hour)})
	if !reflect.DeepEqual(out.Actions, []string{CheckinAskForUpdates}) || !reflect.DeepEqual(out.Rules, []string{"six_hours"}) {
		t.Errorf("outcome = %+v", out)
	}
	out = EvaluateCheckins(rules, CheckinInput{At: at, Last: at.Add(-time.Hour), LastAnyChannel: at.Add(-49 * time.Hour), HasOpenAction: true})
	if !reflect.DeepEqual(out.Actions, []string{CheckinOfferRecap, CheckinAllowHedgedReference}) {
		t.Errorf("outcome = %+v", out)
	}
}

// P1D is a calendar day in the Session TZ (23 h across spring forward).
func TestSection2_ElapsedIsDSTAware(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	last := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	rules := []kairos.CheckinRule{{ID: "d", When: kairos.CheckinWhen{ElapsedGTE: dur("P1D")}, Then: kairos.CheckinThen{AskForUpdates: true}}}
	out := EvaluateCheckins(rules, CheckinInput{At: last.Add(23 * time.Hour), Last: last, Loc: ny})
	if len(out.Actions) != 1 {
		t.Errorf("P1D across spring forward did not fire after 23 h")
	}
	out = EvaluateCheckins(rules, CheckinInput{At: last.Add(23 * time.Hour), Last: last, Loc: time.UTC})
	if len(out.Actions) != 0 {
		t.Errorf("P1D in UTC fired after 23 h")
	}
}

// §4.2 precedence: message → thread override → user default → place → UTC.
func TestSection4_2_SessionTZPrecedence(t *testing.T) {
	at := utc("2026-02-10T03:02:00Z")
	for _, tc := range []struct {
		name, text, thread, user string
		wantTZ, wantSource       string
		ask                      bool
	}{
		{"1 explicit beats all", "call at 3pm Tokyo time", "Europe/Berlin", "America/New_York", "Asia/Tokyo", TZFromMessage, false},
		{"1 explicit offset", "9am UTC+9 works", "Europe/Berlin", "", "Etc/GMT-9", TZFromMessage, false},
		{"1 explicit IANA", "make it Asia/Kolkata time", "", "America/New_York", "Asia/Kolkata", TZFromMessage, false},
		{"1 abbreviation from user", "9am CST ok?", "", "America/Chicago", "America/Chicago", TZFromMessage, false},
		{"2 thread beats user", "see you at 9", "Europe/Berlin", "America/New_York", "Europe/Berlin", TZFromThread, false},
		{"3 user beats place", "I'm in Paris this week", "", "America/New_York", "America/New_York", TZFromUser, false},
		{"4 place mentioned", "I'm in Paris this week", "", "", "Europe/Paris", TZFromLocation, false},
		{"4 multi-word place", "landed in New York", "", "", "America/New_York", TZFromLocation, false},
		{"4 ambiguous places ignored", "flying from Paris to Tokyo", "", "", "UTC", TZFromFallback, false},
		{"4 lower-case words are not places", "i like china and turkey", "", "", "UTC", TZFromFallback, false},
		{"5 fallback", "hello", "", "", "UTC", TZFromFallback, false},
		{"abbreviation unknown asks", "9am EST?", "", "Europe/Berlin", "Europe/Berlin", TZFromUser, true},
		{"abbreviation unknown, no context", "9am PST?", "", "", "UTC", TZFromFallback, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ResolveSessionTZ(tc.text, tc.thread, tc.user, nil, at)
			if r.TZ != tc.wantTZ || r.Source != tc.wantSource || (r.Question != "") != tc.ask {
				t.Errorf("ResolveSessionTZ(%q) = %+v, want %s from %s (ask %v)", tc.text, r, tc.wantTZ, tc.wantSource, tc.ask)
			}
		})
	}
}

func TestDMUserKey(t *testing.T) {
	for in, want := range map[string]string{
		"agent:main:telegram:dm:42":      "telegram:42",
		"agent:main:cli:dm:7":            "cli:7",
		"agent:main:telegram:group:-100": "",
		"garbage":                        "",
	} {
		if got := DMUserKey(in); got != want {
			t.Errorf("DMUserKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// §6.4 TTLs and §6.3 calibration.
func TestSection6_4_TTLs(t *testing.T) {
	at := utc("2026-02-10T03:02:00Z")
	for _, tc := range []struct {
		name                   string
		activity, kind, source string
		horizon                time.Time
		want                   time.Duration
	}{
		{"sleep", "sleep", "", kairos.ActionSourceAuto, time.Time{}, 10 * time.Hour},
		{"planned", "", kairos.ThreadKindConversation, kairos.ActionSourceAuto, time.Time{}, 24 * time.Hour},
		{"gym in a project thread", "exercise:gym", kairos.ThreadKindProject, kairos.ActionSourceAuto, time.Time{}, 24 * time.Hour},
		{"project auto", "", kairos.ThreadKindProject, kairos.ActionSourceAuto, time.Time{}, 7 * 24 * time.Hour},
		{"project clock it", "", kairos.ThreadKindProject, kairos.ActionSourceClockIt, time.Time{}, 30 * 24 * time.Hour},
		{"longer horizon", "", "", kairos.ActionSourceClockIt, at.Add(72 * time.Hour), 84 * time.Hour},
		{"horizon capped", "", "", kairos.ActionSourceClockIt, at.Add(90 * 24 * time.Hour), 30 * 24 * time.Hour},
	} {
		if got := ActionTTL(tc.activity, tc.kind, tc.source, at, tc.horizon); got != tc.want {
			t.Errorf("%s: TTL %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSection6_3_CalibrateAndStatus(t *testing.T) {
	at := utc("2026-02-10T03:02:00Z")
	c, ok := Calibrate(kairos.ActivityCalibration{TypicalMinutes: 120, MaxMinutes: 180}, 60*time.Minute, at)
	if !ok || c.TypicalMinutes != 105 || c.MaxMinutes != 180 || !c.UpdatedAt.Equal(at) {
		t.Errorf("Calibrate = %+v %v", c, ok)
	}
	c, _ = Calibrate(kairos.ActivityCalibration{}, 200*time.Minute, at)
	if c.TypicalMinutes != 200 || c.MaxMinutes != 200 {
		t.Errorf("first observation = %+v", c)
	}
	if _, ok := Calibrate(c, 30*time.Second, at); ok {
		t.Error("sub-minute observation accepted")
	}
	a := &kairos.ClockAction{Status: kairos.ActionInProgress, RecordedAt: at, ExpiresAt: at.Add(24 * time.Hour), ExpectedMaxMinutes: 180}
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{{time.Hour, kairos.ActionInProgress}, {3 * time.Hour, kairos.ActionLikelyDone}, {24 * time.Hour, kairos.ActionExpired}} {
		if got := EffectiveStatus(a, at.Add(tc.after)); got != tc.want {
			t.Errorf("after %v: %s, want %s", tc.after, got, tc.want)
		}
	}
	if IsOpen(a, at.Add(24*time.Hour)) {
		t.Error("expired action is open")
	}
}

func dur(s string) *kairos.Duration {
	d := kairos.MustDuration(s)
	return &d
}
