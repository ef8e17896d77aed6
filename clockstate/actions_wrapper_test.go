package clockstate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
)

// CLOCK.md §6: latest actions (clock-it, auto-store, quotes, caps,
// expiry, confirming cues, calibration), through the wrapper's harness.

func openActions(h *harness, in *kairos.Inbound, at time.Time) []*kairos.ClockAction {
	st := h.state(in.UserKey(), in.ThreadKey())
	var out []*kairos.ClockAction
	for _, a := range st.Actions {
		if clockstate.IsOpen(a, at) {
			out = append(out, a)
		}
	}
	return out
}

// §6.2 A: explicit directives store actions; §6.3 minimal storage.
func TestSection6_2_ExplicitClockIt(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "clock it: I'm going to eat dinner", t0)
	env := h.send(in)
	if env.Reply != "Clocked: Eat dinner (usually about 1 h 15 min)." {
		t.Errorf("reply %q", env.Reply)
	}
	st := h.state(in.UserKey(), in.ThreadKey())
	if len(st.Actions) != 1 {
		t.Fatalf("%d actions", len(st.Actions))
	}
	a := st.Actions[0]
	want := kairos.ClockAction{ID: "act_0001", UserKey: "telegram:1", ThreadKey: in.ThreadKey(), Label: "Eat dinner", Type: "temporal_action",
		Status: kairos.ActionPlanned, Source: kairos.ActionSourceClockIt, Activity: "meal:dinner",
		RecordedAt: t0, ExpiresAt: t0.Add(24 * time.Hour), UpdatedAt: t0, ExpectedTypicalMinutes: 75, ExpectedMaxMinutes: 180}
	if *a != want {
		t.Errorf("action\n got %+v\nwant %+v", *a, want)
	}
	// "clock: paid invoice" is a done event.
	h.send(dm(1, "clock: paid invoice", t0.Add(time.Minute)))
	st = h.state(in.UserKey(), in.ThreadKey())
	if a := st.Actions[0]; a.Label != "Paid invoice" || a.Status != kairos.ActionDone || a.Type != "event" {
		t.Errorf("clock: paid invoice → %+v", a)
	}
	// Appended "clock it".
	env = h.send(dm(1, "calling the bank now, clock it", t0.Add(2*time.Minute)))
	if !strings.HasPrefix(env.Reply, "Clocked: Calling the bank") {
		t.Errorf("appended: %q", env.Reply)
	}
	// Explicit clock it even with auto storage off.
	h2 := newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LatestActions.AutoClockTemporalActions = false })
	h2.send(dm(1, "clock: renew passport", t0))
	if n := len(h2.state("telegram:1", in.ThreadKey()).Actions); n != 1 {
		t.Errorf("explicit with auto off: %d actions", n)
	}
	// Latest actions disabled: nothing stored, the user is told.
	h3 := newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LatestActions.Enabled = false })
	env = h3.send(dm(1, "clock it: gym", t0))
	if !strings.Contains(env.Reply, "turned off") || len(h3.state("telegram:1", in.ThreadKey()).Actions) != 0 {
		t.Errorf("disabled: %q", env.Reply)
	}
}

// §6.2 B / §6.5: auto-store temporal actions with their TTLs.
func TestSection6_2_AutoStoresTemporalActions(t *testing.T) {
	for _, tc := range []struct {
		text   string
		label  string
		ttl    time.Duration
		status string
	}{
		{"ok going to sleep, good night", "Sleep", 10 * time.Hour, kairos.ActionInProgress},
		{"I'm heading to the gym", "Go to the gym", 24 * time.Hour, kairos.ActionInProgress},
		{"brb", "Be right back", 24 * time.Hour, kairos.ActionInProgress},
		{"about to call my mom", "Call my mom", 24 * time.Hour, kairos.ActionPlanned},
		// "after lunch" is 14:00-18:00 (17 h on): kept 12 h past its end.
		{"after lunch I'll fix the sink", "Fix the sink (after lunch)", 29 * time.Hour, kairos.ActionPlanned},
		{"I'm going to finish the report by Friday", "Finish the report by Friday", 0, kairos.ActionPlanned},
	} {
		t.Run(tc.text, func(t *testing.T) {
			h := newHarness(t, nil)
			in := dm(1, tc.text, t0)
			env := h.send(in)
			if env.Reply != "" {
				t.Errorf("auto-store answered %q (the model should answer)", env.Reply)
			}
			st := h.state(in.UserKey(), in.ThreadKey())
			if len(st.Actions) != 1 {
				t.Fatalf("%d actions", len(st.Actions))
			}
			a := st.Actions[0]
			if a.Label != tc.label || a.Status != tc.status || a.Source != kairos.ActionSourceAuto {
				t.Errorf("action %+v", a)
			}
			if tc.ttl > 0 && a.ExpiresAt.Sub(a.RecordedAt) != tc.ttl {
				t.Errorf("TTL %v, want %v", a.ExpiresAt.Sub(a.RecordedAt), tc.ttl)
			}
			if tc.ttl == 0 && a.ExpiresAt.Sub(a.RecordedAt) <= 24*time.Hour { // "by Friday" is a longer horizon
				t.Errorf("horizon ignored: TTL %v", a.ExpiresAt.Sub(a.RecordedAt))
			}
		})
	}
	h := newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LatestActions.AutoClockTemporalActions = false })
	in := dm(1, "heading to the gym", t0)
	h.send(in)
	if n := len(h.state(in.UserKey(), in.ThreadKey()).Actions); n != 0 {
		t.Errorf("auto-stored with auto_clock_temporal_actions false: %d", n)
	}
	h = newHarness(t, nil)
	h.send(dm(1, "I like pizza and my invoice is paid", t0))
	if n := len(h.state(in.UserKey(), in.ThreadKey()).Actions); n != 0 {
		t.Errorf("non-temporal statement stored: %d", n)
	}
}

// §6.3: store_quotes false keeps only the normalized label.
func TestSection6_3_StoreQuotes(t *testing.T) {
	text := "ok so I'm heading to the gym now, then maybe the sauna if Anna is there"
	h := newHarness(t, nil)
	in := dm(1, text, t0)
	h.send(in)
	a := h.state(in.UserKey(), in.ThreadKey()).Actions[0]
	if a.Quote != "" || a.Label != "Go to the gym" {
		t.Errorf("store_quotes false stored %+v", a)
	}
	h = newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LatestActions.StoreQuotes = true })
	h.send(in)
	if a := h.state(in.UserKey(), in.ThreadKey()).Actions[0]; a.Quote != text {
		t.Errorf("store_quotes true: quote %q", a.Quote)
	}
}

// §6.3 / §10.3: the max_items cap.
func TestSection6_3_MaxItemsCap(t *testing.T) {
	h := newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LatestActions.MaxItems = 3 })
	for i := 0; i < 6; i++ {
		h.send(dm(1, fmt.Sprintf("clock it: task %d", i), t0.Add(time.Duration(i)*time.Minute)))
	}
	st := h.state("telegram:1", "agent:main:telegram:dm:1")
	if len(st.Actions) != 3 || st.Actions[0].Label != "Task 5" || st.Actions[2].Label != "Task 3" {
		var labels []string
		for _, a := range st.Actions {
			labels = append(labels, a.Label)
		}
		t.Errorf("kept %v", labels)
	}
}

// §6.4: all actions expire; an expired action is never presented as open
// and does not count as has_open_action.
func TestSection6_4_ExpiredActionNotPresentedAsOpen(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "going to sleep", t0)
	h.send(in)
	// 3 h later (within the sleep TTL): the hedged reference is allowed.
	env := h.send(dm(1, "morning!", t0.Add(3*time.Hour)))
	if strings.Join(env.CheckinActions, ",") != "allow_hedged_reference" {
		t.Fatalf("actions %v", env.CheckinActions)
	}
	mustContain(t, env.Text, `"Sleep"`, "allow_hedged_reference", "action_gap_2h", "hedge")
	// 11 h after going to sleep the action has expired (TTL ~10 h).
	env = h.send(dm(1, "hi", t0.Add(14*time.Hour)))
	for _, a := range env.CheckinActions {
		if a == "allow_hedged_reference" {
			t.Errorf("expired action counted as open")
		}
	}
	mustNotContain(t, env.Text, "Sleep", "Open action")
	if got := openActions(h, in, t0.Add(14*time.Hour)); len(got) != 0 {
		t.Errorf("open after expiry: %+v", got[0])
	}
	if r, _ := h.cmd(dm(1, "", t0.Add(14*time.Hour)), ""); strings.Contains(r, "Sleep") {
		t.Errorf("/clock lists an expired action:\n%s", r)
	}
}

// §6.4: project actions live 7–30 days.
func TestSection6_4_ProjectActionTTL(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "clock: kind project", t0)
	h.send(in)
	h.send(dm(1, "clock it: draft the API spec", t0))
	h.send(dm(1, "about to review the migration plan", t0.Add(time.Minute)))
	st := h.state(in.UserKey(), in.ThreadKey())
	ttl := map[string]time.Duration{}
	for _, a := range st.Actions {
		ttl[a.Label] = a.ExpiresAt.Sub(a.RecordedAt)
	}
	if ttl["Draft the API spec"] != 30*24*time.Hour || ttl["Review the migration plan"] != 7*24*time.Hour {
		t.Errorf("TTLs %v", ttl)
	}
}

// §6.5: a later state that an open action could explain asks a confirming
// question, never asserts.
func TestSection6_5_ConfirmingCue(t *testing.T) {
	h := newHarness(t, nil)
	h.send(dm(1, "I'm headed to the gym", t0))
	env := h.send(dm(1, "I'm so sore", t0.Add(90*time.Minute)))
	if !env.TemporalAwareness {
		t.Error("cue did not turn temporal awareness on")
	}
	mustContain(t, env.Text, `"Go to the gym"`, "confirming question", "never state it as fact")
	// With inference disabled the model is told to ask, not infer.
	h = newHarness(t, func(p *kairos.Policy) { p.Clock.Inference.Enabled = false })
	h.send(dm(1, "I'm headed to the gym", t0))
	env = h.send(dm(1, "back home", t0.Add(3*time.Hour)))
	mustContain(t, env.Text, "Do not infer")
}

// §6.3: per-user calibration of typical and maximum durations.
func TestSection6_3_Calibration(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "heading to the gym", t0)
	h.send(in)
	env := h.send(dm(1, "clock: done gym", t0.Add(60*time.Minute)))
	if env.Reply != "Marked done: Go to the gym." {
		t.Errorf("reply %q", env.Reply)
	}
	st := h.state(in.UserKey(), in.ThreadKey())
	c := st.User.Calibration["exercise:gym"]
	if c.TypicalMinutes != 105 || c.MaxMinutes != 180 {
		t.Errorf("calibration %+v", c)
	}
	h.send(dm(1, "heading to the gym", t0.Add(24*time.Hour)))
	st = h.state(in.UserKey(), in.ThreadKey())
	if a := st.Actions[0]; a.ExpectedTypicalMinutes != 105 {
		t.Errorf("next gym action uses %d min", a.ExpectedTypicalMinutes)
	}
	// Another user keeps the template.
	h.send(dm(2, "heading to the gym", t0))
	if a := h.state("telegram:2", "agent:main:telegram:dm:2").Actions[0]; a.ExpectedTypicalMinutes != 120 {
		t.Errorf("other user's gym = %d min", a.ExpectedTypicalMinutes)
	}
	if r, err := h.cmd(in, "calibrate meal:dinner 90 240"); err != nil || !strings.Contains(r, "90") {
		t.Errorf("calibrate: %q %v", r, err)
	}
	h.send(dm(1, "clock it: eat dinner", t0.Add(25*time.Hour)))
	if a := h.state(in.UserKey(), in.ThreadKey()).Actions[0]; a.ExpectedTypicalMinutes != 90 || a.ExpectedMaxMinutes != 240 {
		t.Errorf("dinner %+v", a)
	}
	env = h.send(dm(1, "clock: cancel dinner", t0.Add(25*time.Hour+time.Minute)))
	if env.Reply != "Marked canceled: Eat dinner." {
		t.Errorf("cancel reply %q", env.Reply)
	}
}

// §6.4: all actions expire, whatever stored them.
func TestSection6_4_AllActionsExpire(t *testing.T) {
	h := newHarness(t, nil)
	for i, text := range []string{"clock it: renew the passport", "clock: paid invoice", "going to sleep", "brb",
		"heading to the gym", "about to call mom", "clock: kind project", "clock it: ship the beta by next month", "I'm going to write the spec"} {
		h.send(dm(1, text, t0.Add(time.Duration(i)*time.Minute)))
	}
	st := h.state("telegram:1", "agent:main:telegram:dm:1")
	if len(st.Actions) < 7 {
		t.Fatalf("only %d actions", len(st.Actions))
	}
	for _, a := range st.Actions {
		ttl := a.ExpiresAt.Sub(a.RecordedAt)
		if ttl <= 0 || ttl > clockstate.TTLMaxHorizon {
			t.Errorf("%q expires after %v", a.Label, ttl)
		}
		if clockstate.IsOpen(a, a.ExpiresAt) {
			t.Errorf("%q still open at its expiry", a.Label)
		}
	}
}
