package clockstate_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// t0 is Monday 2026-02-09 10:00 in Tokyo.
var t0 = time.Date(2026, 2, 9, 1, 0, 0, 0, time.UTC)

type harness struct {
	tb  testing.TB
	ctx context.Context
	w   *clockstate.Wrapper
	cs  *store.ClockStore
	pol atomic.Pointer[kairos.Policy]
	ids atomic.Int64
	// host is the host clock; messages carry their own dates.
	host time.Time
}

func newHarness(tb testing.TB, mut func(*kairos.Policy)) *harness {
	tb.Helper()
	return newHarnessDB(tb, storetest.MustOpenDB(tb), mut)
}

func newHarnessDB(tb testing.TB, db *store.DB, mut func(*kairos.Policy)) *harness {
	h := &harness{tb: tb, ctx: context.Background(), cs: store.NewClockStore(db), host: t0}
	p := kairos.DefaultPolicy()
	if mut != nil {
		mut(p)
	}
	h.pol.Store(p)
	h.w = clockstate.New(h.cs, clockstate.Config{
		Policy:  func() *kairos.Policy { return h.pol.Load() },
		Now:     func() time.Time { return h.host },
		AgentTZ: "Europe/Berlin",
		NewID:   func() string { return fmt.Sprintf("act_%04d", h.ids.Add(1)) },
	})
	return h
}

func dm(user int64, text string, at time.Time) *kairos.Inbound {
	return &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: user, ChatKind: kairos.ChatDM, UserID: user, Text: text, Date: at}
}

func grp(chat, user int64, text string, at time.Time) *kairos.Inbound {
	return &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: chat, ChatKind: kairos.ChatGroup, UserID: user, Text: text, Date: at, Addressed: true}
}

func (h *harness) send(in *kairos.Inbound) *kairos.ClockEnvelope {
	h.tb.Helper()
	env, err := h.w.OnUserMessage(h.ctx, in)
	if err != nil {
		h.tb.Fatalf("OnUserMessage(%q): %v", in.Text, err)
	}
	return env
}

func (h *harness) reply(in *kairos.Inbound, text string, at time.Time) {
	h.tb.Helper()
	if err := h.w.OnAgentMessage(h.ctx, &kairos.AgentMessage{Channel: in.Channel, ThreadKey: in.ThreadKey(), UserKey: in.UserKey(), SentAt: at, Text: text}); err != nil {
		h.tb.Fatalf("OnAgentMessage: %v", err)
	}
}

func (h *harness) state(userKey, threadKey string) *kairos.ClockState {
	h.tb.Helper()
	st, err := h.w.LoadClockState(h.ctx, userKey, threadKey)
	if err != nil {
		h.tb.Fatal(err)
	}
	return st
}

func (h *harness) cmd(in *kairos.Inbound, args string) (string, error) {
	return h.w.ClockCommand(h.ctx, in, args)
}

func (h *harness) setTZ(in *kairos.Inbound, tz string) {
	h.tb.Helper()
	if _, err := h.cmd(in, "tz "+tz); err != nil {
		h.tb.Fatal(err)
	}
}

func mustContain(t *testing.T, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("envelope lacks %q:\n%s", s, text)
		}
	}
}

func mustNotContain(t *testing.T, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(text, s) {
			t.Errorf("envelope has %q:\n%s", s, text)
		}
	}
}

// §4.1: last user message per user and thread, last interaction per
// thread, last interaction across channels per user.
func TestSection4_1_RecordsTimestamps(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "hello", t0)
	h.send(in)
	st := h.state(in.UserKey(), in.ThreadKey())
	for name, got := range map[string]time.Time{
		"thread last_user_message":          st.Thread.LastUserMessage,
		"thread last_interaction":           st.Thread.LastInteraction,
		"user last_interaction_any_channel": st.User.LastInteractionAnyChannel,
		"user channel last_user_message":    st.User.Channels[in.ThreadKey()].LastUserMessage,
		"thread last_user_message_by_user":  st.Thread.LastUserMessageByUser[in.UserKey()],
	} {
		if !got.Equal(t0) {
			t.Errorf("%s = %v, want %v", name, got, t0)
		}
	}
	h.reply(in, "Hello! How can I help?", t0.Add(5*time.Second))
	st = h.state(in.UserKey(), in.ThreadKey())
	if !st.Thread.LastAgentMessage.Equal(t0.Add(5*time.Second)) || !st.Thread.LastInteraction.Equal(t0.Add(5*time.Second)) {
		t.Errorf("after the agent: %+v", st.Thread)
	}
	if !st.User.LastInteractionAnyChannel.Equal(t0) {
		t.Errorf("agent message moved the user's any-channel mark")
	}
}

func TestSection4_1_CrossChannelOnlyWhenEnabled(t *testing.T) {
	h := newHarness(t, func(p *kairos.Policy) { p.Clock.CrossChannelTracking = false })
	in := dm(1, "hello", t0)
	env := h.send(in)
	if st := h.state(in.UserKey(), in.ThreadKey()); !st.User.LastInteractionAnyChannel.IsZero() {
		t.Errorf("any-channel recorded with cross_channel_tracking false")
	}
	if env.ElapsedAnyChannel != "" {
		t.Errorf("ElapsedAnyChannel = %q", env.ElapsedAnyChannel)
	}
}

// §4.1 / §4.5: bookkeeping happens even when temporal awareness is off
// (disabled in the policy, or mode off for the user).
func TestSection4_1_RecordsEvenWhenTemporalAwarenessOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(*kairos.Policy)
		mode string
	}{
		{"clock disabled", func(p *kairos.Policy) { p.Clock.Enabled = false }, ""},
		{"policy mode off", func(p *kairos.Policy) { p.Clock.Mode = "off" }, ""},
		{"user mode off", nil, "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.mut)
			in := dm(1, "clock: kind project", t0)
			h.send(in)
			if tc.mode != "" {
				if _, err := h.cmd(in, "mode "+tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			later := dm(1, "any news?", t0.Add(72*time.Hour))
			env := h.send(later)
			if env.TemporalAwareness || len(env.CheckinActions) != 0 {
				t.Errorf("temporal awareness on: %+v", env)
			}
			if env.Elapsed != "P3D" {
				t.Errorf("elapsed = %q, want P3D", env.Elapsed)
			}
			st := h.state(later.UserKey(), later.ThreadKey())
			if !st.Thread.LastInteraction.Equal(later.Date) || !st.User.LastInteractionAnyChannel.Equal(later.Date) {
				t.Errorf("not recorded: %+v", st.Thread)
			}
		})
	}
}

func TestSection4_1_NothingRecordedWhenTimestampsOff(t *testing.T) {
	h := newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LastMessageTimestamps = false })
	in := dm(1, "hello", t0)
	h.send(in)
	h.reply(in, "Hi there, what can I do?", t0.Add(time.Second))
	if st := h.state(in.UserKey(), in.ThreadKey()); !st.Thread.LastInteraction.IsZero() {
		t.Errorf("recorded with last_message_timestamps false: %+v", st.Thread)
	}
}

// CONTRACT: the turn's time is the message's own date, also when it is
// ahead of the host clock.
func TestSection4_5_ReceivedAtIsTheMessageDate(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "hello", t0)
	h.setTZ(in, "Asia/Tokyo")
	h.host = t0.Add(-3 * time.Hour) // host clock behind the message
	env := h.send(in)
	if !env.At.Equal(t0) || env.NowISO != "2026-02-09T10:00:00+09:00" {
		t.Errorf("At %v NowISO %s, want the message's date", env.At, env.NowISO)
	}
	if st := h.state(in.UserKey(), in.ThreadKey()); !st.Thread.LastUserMessage.Equal(t0) {
		t.Errorf("stored %v, want the message's date", st.Thread.LastUserMessage)
	}
	// A message without a date falls back to the host clock.
	env = h.send(dm(1, "again", time.Time{}))
	if !env.At.Equal(h.host) {
		t.Errorf("dateless message At = %v", env.At)
	}
}

// §4.5 on_agent_message: last_agent_message and last_interaction; the
// next elapsed time counts from the agent's reply.
func TestSection4_5_OnAgentMessage(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "plan my week", t0)
	h.send(in)
	h.reply(in, "Here is a plan for your week: …", t0.Add(10*time.Minute))
	env := h.send(dm(1, "thanks, and next?", t0.Add(70*time.Minute)))
	if env.Elapsed != "PT1H" {
		t.Errorf("elapsed = %s, want PT1H (from the agent's reply)", env.Elapsed)
	}
	// A reply without SentAt is stamped with the host clock.
	h.host = t0.Add(2 * time.Hour)
	h.w.OnAgentMessage(h.ctx, &kairos.AgentMessage{ThreadKey: in.ThreadKey(), UserKey: in.UserKey(), Text: "Next is Tuesday's review."})
	if st := h.state(in.UserKey(), in.ThreadKey()); !st.Thread.LastAgentMessage.Equal(h.host) {
		t.Errorf("last agent = %v, want host time", st.Thread.LastAgentMessage)
	}
}

// §10.3: pure acknowledgements write nothing.
func TestSection10_3_AcknowledgementsWriteNothing(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "hello", t0)
	h.send(in)
	for _, ack := range []string{"ok", "Got it!", "👍", "thanks"} {
		h.reply(in, ack, t0.Add(time.Hour))
	}
	st := h.state(in.UserKey(), in.ThreadKey())
	if !st.Thread.LastAgentMessage.IsZero() || !st.Thread.LastInteraction.Equal(t0) {
		t.Errorf("acknowledgement recorded: %+v", st.Thread)
	}
	h.reply(in, "Done: I moved the meeting to 3pm.", t0.Add(time.Hour))
	if st := h.state(in.UserKey(), in.ThreadKey()); !st.Thread.LastAgentMessage.Equal(t0.Add(time.Hour)) {
		t.Errorf("substantive reply not recorded")
	}
}

var reISOWithOffset = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d`)

// CONTRACT / §11: the envelope always states the turn time as ISO-8601
// with offset in the Session TZ with its label, and the elapsed time as an
// ISO-8601 duration.
func TestSection11_EnvelopeStatesTimeAndElapsed(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "hello", t0)
	h.setTZ(in, "Asia/Tokyo")
	env := h.send(in)
	if env.SessionTZ != "Asia/Tokyo" || env.NowISO != "2026-02-09T10:00:00+09:00" || env.Elapsed != "" {
		t.Errorf("first envelope %+v", env)
	}
	mustContain(t, env.Text, "2026-02-09T10:00:00+09:00", "Asia/Tokyo", "First interaction")
	env = h.send(dm(1, "back again", t0.Add(48*time.Hour)))
	if env.Elapsed != "P2D" {
		t.Errorf("elapsed = %q", env.Elapsed)
	}
	mustContain(t, env.Text, "2026-02-11T10:00:00+09:00 (Asia/Tokyo)", "P2D")
	env = h.send(dm(1, "and again", t0.Add(51*time.Hour+15*time.Minute)))
	mustContain(t, env.Text, "PT3H15M")
	if !reISOWithOffset.MatchString(env.Text) {
		t.Errorf("no ISO-8601 with offset in %q", env.Text)
	}
	if env.UserKey != "telegram:1" || env.ThreadKey != "agent:main:telegram:dm:1" { // §7.2 thread key
		t.Errorf("keys %s %s", env.UserKey, env.ThreadKey)
	}
}

// §4.2 step 5: UTC fallback, with an explicit notice when time matters.
func TestSection4_2_FallbackUTCWithNotice(t *testing.T) {
	h := newHarness(t, nil)
	env := h.send(dm(1, "hello", t0))
	if env.SessionTZ != "UTC" || env.NowISO != "2026-02-09T01:00:00+00:00" {
		t.Errorf("fallback %+v", env)
	}
	mustNotContain(t, env.Text, "assume UTC")
	env = h.send(dm(1, "remind me tomorrow at 9am", t0.Add(time.Minute)))
	mustContain(t, env.Text, "assume UTC", "2026-02-10T09:00:00+00:00")
}

// §4.2 steps 1 and 4 reach the envelope; steps 2 and 3 come from state.
func TestSection4_2_PrecedenceInWrapper(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "hello", t0)
	if _, err := h.cmd(in, "home America/New_York"); err != nil {
		t.Fatal(err)
	}
	if env := h.send(dm(1, "hi", t0)); env.SessionTZ != "America/New_York" {
		t.Errorf("user default not used: %s", env.SessionTZ)
	}
	h.setTZ(in, "Europe/Berlin")
	if env := h.send(dm(1, "I'm in Paris", t0)); env.SessionTZ != "Europe/Berlin" {
		t.Errorf("thread override not preferred: %s", env.SessionTZ)
	}
	env := h.send(dm(1, "call at 3pm Tokyo time?", t0))
	if env.SessionTZ != "Asia/Tokyo" {
		t.Errorf("explicit zone not preferred: %s", env.SessionTZ)
	}
	mustContain(t, env.Text, "stated in the message", "2026-02-09T15:00:00+09:00")
	h2 := newHarness(t, nil)
	if env := h2.send(dm(2, "Landed in Singapore!", t0)); env.SessionTZ != "Asia/Singapore" {
		t.Errorf("mentioned place not used: %s", env.SessionTZ)
	}
}

// §4.2: abbreviations are resolved from what is known of the user or
// asked about.
func TestSection4_2_AbbreviationsInWrapper(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "hello", t0)
	h.setTZ(in, "America/Chicago")
	env := h.send(dm(1, "let's talk at 3pm CST", t0))
	if env.SessionTZ != "America/Chicago" {
		t.Errorf("CST for a Chicago user = %s", env.SessionTZ)
	}
	mustNotContain(t, env.Text, "Which timezone")
	env = h.send(dm(1, "or 4pm IST?", t0))
	mustContain(t, env.Text, "Which timezone do you mean by \"IST\"")
}

// §5.1 / §3: when nothing fires, nothing extra is added (no spam), and
// the text stays compact.
func TestSection5_1_NoSpamWhenNothingFires(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "what's the capital of France?", t0)
	h.setTZ(in, "Asia/Tokyo")
	h.send(in)
	h.reply(in, "Paris.", t0.Add(time.Second))
	env := h.send(dm(1, "and of Italy?", t0.Add(2*time.Minute)))
	if env.TemporalAwareness || len(env.CheckinActions) != 0 || env.Reply != "" {
		t.Errorf("envelope %+v", env)
	}
	if strings.Count(env.Text, "\n") != 0 {
		t.Errorf("extra lines when nothing fired:\n%s", env.Text)
	}
	mustNotContain(t, env.Text, "Check-in", "Inference", "Open action")
	if tokens := len(strings.Fields(env.Text)) * 4 / 3; tokens >= 120 {
		t.Errorf("about %d tokens: %s", tokens, env.Text)
	}
}

// §9 / §12 "If project gap ≥ threshold: ask for updates before continuing".
func TestSection9_CheckinsReachTheEnvelope(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "clock: kind project", t0)
	env := h.send(in)
	if env.Reply != "Thread kind set to project." || env.ThreadKind != "project" {
		t.Fatalf("kind directive: %+v", env)
	}
	env = h.send(dm(1, "where were we?", t0.Add(2*24*time.Hour)))
	if !env.TemporalAwareness || strings.Join(env.CheckinActions, ",") != "ask_for_updates" {
		t.Errorf("actions %v", env.CheckinActions)
	}
	mustContain(t, env.Text, "ask_for_updates", "project_gap_1d", "P2D")
	env = h.send(dm(1, "hello?", t0.Add(40*24*time.Hour)))
	if strings.Join(env.CheckinActions, ",") != "ask_for_updates,offer_recap" {
		t.Errorf("actions %v", env.CheckinActions)
	}
	mustContain(t, env.Text, "offer_recap", "long_gap_30d")
}

// §5.1: clock.enabled false skips temporal awareness entirely.
func TestSection5_1_DisabledSkipsRules(t *testing.T) {
	h := newHarness(t, func(p *kairos.Policy) { p.Clock.Enabled = false })
	h.send(dm(1, "clock: kind project", t0))
	env := h.send(dm(1, "status?", t0.Add(40*24*time.Hour)))
	if env.TemporalAwareness || len(env.CheckinActions) != 0 {
		t.Errorf("%+v", env)
	}
	// Anchoring is still enforced when time matters.
	env = h.send(dm(1, "remind me at 9am tomorrow", t0.Add(40*24*time.Hour+time.Minute)))
	mustContain(t, env.Text, "Anchor times")
}

// Policy changes are seen on the next message (hot reload), and check-in
// durations come from the policy.
func TestSection0_PolicyIsReadPerMessage(t *testing.T) {
	h := newHarness(t, nil)
	h.send(dm(1, "hi", t0))
	p := kairos.DefaultPolicy()
	six := kairos.MustDuration("PT6H")
	p.Clock.Checkins.Rules = []kairos.CheckinRule{{ID: "six_hours", When: kairos.CheckinWhen{ElapsedGTE: &six}, Then: kairos.CheckinThen{OfferRecap: true}}}
	h.pol.Store(p)
	env := h.send(dm(1, "hi again", t0.Add(7*time.Hour)))
	if strings.Join(env.CheckinActions, ",") != "offer_recap" {
		t.Errorf("custom rule did not fire: %v", env.CheckinActions)
	}
	// A missing policy means the §0 defaults.
	h2 := newHarness(t, nil)
	h2.w = clockstate.New(h2.cs, clockstate.Config{Now: func() time.Time { return t0 }})
	if got := h2.w.Policy().Clock.Checkins.Rules[0].ID; got != "project_gap_1d" {
		t.Errorf("default policy rule %s", got)
	}
}

// §5.2: thread kinds, explicit directive, default conversation.
func TestSection5_2_ThreadKind(t *testing.T) {
	h := newHarness(t, nil)
	env := h.send(dm(1, "hello", t0))
	if env.ThreadKind != "conversation" {
		t.Errorf("default kind %s", env.ThreadKind)
	}
	for _, k := range kairos.ThreadKinds {
		env = h.send(dm(1, "clock: kind "+k, t0))
		if env.Reply != "Thread kind set to "+k+"." || env.ThreadKind != k {
			t.Errorf("kind %s: %+v", k, env)
		}
	}
	env = h.send(dm(1, "clock: kind party", t0))
	if !strings.Contains(env.Reply, "Unknown thread kind") || env.ThreadKind != "operations" {
		t.Errorf("bad kind: %+v", env)
	}
}

// §8: inference only for tone; impactful actions need confirmation.
func TestSection8_InferenceAndConfirmation(t *testing.T) {
	h := newHarness(t, nil)
	h.send(dm(1, "going to cook dinner", t0))
	env := h.send(dm(1, "what now?", t0.Add(3*time.Hour)))
	mustContain(t, env.Text, "never state it as fact", "hedge")
	env = h.send(dm(1, "schedule a meeting with Bob tomorrow at 10am", t0.Add(3*time.Hour+time.Minute)))
	mustContain(t, env.Text, "Confirm before reminders, calendar changes, messages to others")
	h = newHarness(t, func(p *kairos.Policy) { p.Clock.Inference.RequireConfirmationForImpactfulActions = false })
	env = h.send(dm(1, "schedule a meeting with Bob tomorrow at 10am", t0))
	mustNotContain(t, env.Text, "Confirm before")
}

// /clock: show and set tz, kind, mode with clear errors.
func TestClockCommand(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "", t0)
	r, err := h.cmd(in, "")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, r, "Session TZ: UTC", "Kind: conversation", "Mode: light (policy default)", "Open actions: none")
	for _, tc := range []struct{ args, reply string }{
		{"tz Asia/Tokyo", "Session timezone for this thread set to Asia/Tokyo."},
		{"kind project", "Thread kind set to project."},
		{"mode normal", "Clock mode set to normal."},
		{"home Europe/Berlin", "Your home timezone is now Europe/Berlin."},
	} {
		if r, err := h.cmd(in, tc.args); err != nil || r != tc.reply {
			t.Errorf("/clock %s = %q %v", tc.args, r, err)
		}
	}
	h.send(dm(1, "heading to the gym", t0))
	r, _ = h.cmd(in, "")
	mustContain(t, r, "Session TZ: Asia/Tokyo (thread setting)", "Kind: project", "Mode: normal", "Go to the gym (in_progress", "Home TZ: Europe/Berlin")
	for _, args := range []string{"tz EST", "tz Mars/Olympus", "kind party", "mode loud", "frobnicate", "calibrate gym x", "tz"} {
		_, err := h.cmd(in, args)
		if kairos.ErrorCode(err) != kairos.EINVALID || kairos.ErrorMessage(err) == "" {
			t.Errorf("/clock %s: %v", args, err)
		}
	}
	if r, _ := h.cmd(in, "mode default"); !strings.Contains(r, "light") {
		t.Errorf("mode default: %q", r)
	}
	if r, _ := h.cmd(in, "tz clear"); !strings.Contains(r, "cleared") {
		t.Errorf("tz clear: %q", r)
	}
	// /clock tz in a DM becomes the home zone when none is set.
	h2 := newHarness(t, nil)
	h2.cmd(dm(5, "", t0), "tz Asia/Kolkata")
	if st := h2.state("telegram:5", "agent:main:telegram:dm:5"); st.User.DefaultTZ != "Asia/Kolkata" {
		t.Errorf("home not defaulted: %q", st.User.DefaultTZ)
	}
	if _, err := h.cmd(in, "done"); err != nil {
		t.Error(err)
	}
}

// §4.4: the provider's session_timezone(thread_key) from stored state.
func TestSection4_4_ProviderSessionTimezone(t *testing.T) {
	h := newHarness(t, nil)
	in := dm(1, "", t0)
	if tz, err := h.w.SessionTimezone(h.ctx, in.ThreadKey()); err != nil || tz != "UTC" {
		t.Errorf("empty: %s %v", tz, err)
	}
	h.cmd(in, "home America/Chicago")
	if tz, _ := h.w.SessionTimezone(h.ctx, in.ThreadKey()); tz != "America/Chicago" {
		t.Errorf("user default: %s", tz)
	}
	h.cmd(in, "tz Asia/Tokyo")
	if tz, _ := h.w.SessionTimezone(h.ctx, in.ThreadKey()); tz != "Asia/Tokyo" {
		t.Errorf("override: %s", tz)
	}
	if h.w.AgentTimezone() != "Europe/Berlin" || !h.w.Now().Equal(t0) {
		t.Errorf("agent tz %s now %v", h.w.AgentTimezone(), h.w.Now())
	}
	if err := h.w.SaveClockState(h.ctx, "telegram:1", in.ThreadKey(), kairos.ClockPatch{SessionTZ: ptr("PST")}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("save abbreviation: %v", err)
	}
}

func ptr(s string) *string { return &s }

// §12 compliance checklist: one row per line.
func TestSection12_ComplianceChecklist(t *testing.T) {
	t.Run("resolve Session TZ via precedence order", TestSection4_2_PrecedenceInWrapper)
	t.Run("anchor floating times before scheduling", func(t *testing.T) {
		h := newHarness(t, nil)
		in := dm(1, "remind me at 9am", t0)
		h.setTZ(in, "Asia/Tokyo")
		env := h.send(in)
		mustContain(t, env.Text, `"9am" = 2026-02-10T09:00:00+09:00 (Asia/Tokyo)`, "Anchor times")
	})
	t.Run("record last-message timestamps per user/thread; across channels if enabled", TestSection4_1_RecordsTimestamps)
	t.Run("evaluate user rules per prompt", TestSection0_PolicyIsReadPerMessage)
	t.Run("project gap >= threshold asks for updates", TestSection9_CheckinsReachTheEnvelope)
	t.Run("store latest actions via clock it and auto policy", func(t *testing.T) {
		TestSection6_2_ExplicitClockIt(t)
		TestSection6_2_AutoStoresTemporalActions(t)
	})
	t.Run("per-user calibration and multi-user support", func(t *testing.T) {
		TestSection6_3_Calibration(t)
		TestSection7_3_Groups(t)
	})
	t.Run("never treat inference as fact; confirm before impactful actions", TestSection8_InferenceAndConfirmation)
}

// §10.3: atomic updates under concurrency. Many goroutines on one thread
// (run with -race): no write fails, marks end at the maximum, the action
// cap holds.
func TestSection10_3_HammerOneThread(t *testing.T) {
	h := newHarness(t, func(p *kairos.Policy) { p.Clock.Store.LatestActions.MaxItems = 5 })
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				at := t0.Add(time.Duration(g*each+i) * time.Second)
				in := grp(-7, int64(g%3+1), "heading to the gym", at)
				if i%2 == 1 {
					in.Text = "clock it: step " + fmt.Sprint(i)
				}
				if _, err := h.w.OnUserMessage(h.ctx, in); err != nil {
					errs <- err
					continue
				}
				if err := h.w.OnAgentMessage(h.ctx, &kairos.AgentMessage{ThreadKey: in.ThreadKey(), UserKey: in.UserKey(), SentAt: at.Add(time.Second), Text: "Noted your plan."}); err != nil {
					errs <- err
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	last := t0.Add(time.Duration(workers*each-1)*time.Second + time.Second)
	th := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatGroup, -7, 0, 0)
	for u := 1; u <= 3; u++ {
		st := h.state(fmt.Sprintf("telegram:%d", u), th)
		if !st.Thread.LastInteraction.Equal(last) {
			t.Errorf("last interaction %v, want %v", st.Thread.LastInteraction, last)
		}
		if len(st.Actions) > 5 {
			t.Errorf("user %d has %d actions, cap 5", u, len(st.Actions))
		}
	}
}

// BenchmarkOnUserMessage measures the wrapper with the envelope on a real
// SQLite file (the per-turn hot path).
func BenchmarkOnUserMessage(b *testing.B) {
	h := newHarnessDB(b, storetest.MustOpenSQLite(b), nil)
	in := dm(1, "hello", t0)
	h.setTZ(in, "Asia/Tokyo")
	h.send(dm(1, "heading to the gym", t0))
	texts := []string{"what's the plan for tomorrow at 9am?", "I'm back, that was a good workout", "tell me about Go generics"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := dm(1, texts[i%len(texts)], t0.Add(time.Duration(i+1)*time.Minute))
		env, err := h.w.OnUserMessage(h.ctx, in)
		if err != nil || env.Text == "" {
			b.Fatal(err)
		}
	}
}

// §0: "If policy is missing, agents MUST default to the above block."
func TestSection0_MissingPolicyDefaults(t *testing.T) {
	h := newHarness(t, nil)
	for i, cfg := range []clockstate.Config{
		{Now: func() time.Time { return t0 }},
		{Now: func() time.Time { return t0 }, Policy: func() *kairos.Policy { return nil }},
	} {
		w := clockstate.New(h.cs, cfg)
		p := w.Policy()
		if !p.Clock.Enabled || p.Clock.Mode != "light" || p.Clock.Store.LatestActions.MaxItems != 25 || len(p.Clock.Checkins.Rules) != 3 ||
			p.Clock.AmbiguityThresholdHours != 4 || p.Clock.Store.LatestActions.StoreQuotes {
			t.Errorf("defaults %+v", p.Clock)
		}
		in := dm(int64(10+i), "clock: kind project", t0)
		if _, err := w.OnUserMessage(h.ctx, in); err != nil {
			t.Fatal(err)
		}
		env, err := w.OnUserMessage(h.ctx, dm(int64(10+i), "status?", t0.Add(26*time.Hour)))
		if err != nil || strings.Join(env.CheckinActions, ",") != "ask_for_updates" {
			t.Errorf("default rules not applied: %v %v", env.CheckinActions, err)
		}
	}
}

// §11: inferred completion is hedged and open to correction.
func TestSection11_HedgedReferences(t *testing.T) {
	h := newHarness(t, nil)
	h.send(dm(1, "about to eat dinner", t0))
	env := h.send(dm(1, "hey", t0.Add(3*time.Hour)))
	mustContain(t, env.Text, `"if", "sounds like", "hope"`, "accept correction at once", "unconfirmed", "Confirm before")
}
