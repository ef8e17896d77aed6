package clockstate

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
)

// Config configures a Wrapper.
type Config struct {
	// Policy returns the operator's current policy (hot reloads are seen on
	// the next message). nil, or a nil result, means kairos.DefaultPolicy.
	Policy func() *kairos.Policy
	// Now is the host clock; it stamps agent messages without SentAt and
	// user messages without a date. Default time.Now.
	Now func() time.Time
	// AgentTZ overrides the host timezone (default: the OS zone, else UTC).
	AgentTZ string
	Logger  *slog.Logger
	// NewID makes action ids (tests make them deterministic).
	NewID func() string
}

// Wrapper is the interaction wrapper of §4.5. It implements
// kairos.ClockWrapper and embeds the §4.4 timezone Provider.
type Wrapper struct {
	*Provider
	store  kairos.ClockStore
	policy func() *kairos.Policy
	newID  func() string
	log    *slog.Logger

	mu sync.Mutex
}

var _ kairos.ClockWrapper = (*Wrapper)(nil)

// New returns a Wrapper over store.
func New(store kairos.ClockStore, cfg Config) *Wrapper {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Wrapper{
		Provider: NewProvider(store, cfg.Now, cfg.AgentTZ),
		store:    store,
		policy:   cfg.Policy,
		newID:    cfg.NewID,
		log:      log.With("component", "clockstate"),
	}
	if w.newID == nil {
		w.newID = newActionID
	}
	return w
}

// Policy returns the policy in force.
func (w *Wrapper) Policy() *kairos.Policy {
	if w.policy != nil {
		if p := w.policy(); p != nil {
			return p
		}
	}
	return kairos.DefaultPolicy()
}

// validMode reports whether m is a clock mode.
func validMode(m string) bool {
	return m == kairos.ClockModeOff || m == kairos.ClockModeLight || m == kairos.ClockModeNormal
}

// validKind reports whether k is a thread kind.
func validKind(k string) bool {
	for _, x := range kairos.ThreadKinds {
		if x == k {
			return true
		}
	}
	return false
}

// EffectiveMode is the user's policy_overrides.mode, else the policy's
// clock.mode, else light.
func EffectiveMode(p *kairos.Policy, u *kairos.UserClock) string {
	if u != nil && validMode(u.Mode) {
		return u.Mode
	}
	if p != nil && validMode(p.Clock.Mode) {
		return p.Clock.Mode
	}
	return kairos.ClockModeLight
}

func kindOf(t *kairos.ThreadClock) string {
	if validKind(t.Kind) {
		return t.Kind
	}
	return kairos.ThreadKindConversation
}

// LoadClockState is §4.5 load_clock_state(user_key, thread_key).
func (w *Wrapper) LoadClockState(ctx context.Context, userKey, threadKey string) (*kairos.ClockState, error) {
	st, err := w.store.LoadClockState(ctx, userKey, threadKey)
	if err != nil {
		return nil, fmt.Errorf("load clock state: %w", err)
	}
	return st, nil
}

// SaveClockState is §4.5 save_clock_state(user_key, thread_key, patch),
// validating the values: thread kinds of §5.2, IANA zones, modes
// off|light|normal ("" clears a setting). EINVALID for a bad value.
func (w *Wrapper) SaveClockState(ctx context.Context, userKey, threadKey string, p kairos.ClockPatch) error {
	if p.ThreadKind != nil && *p.ThreadKind != "" && !validKind(*p.ThreadKind) {
		return kairos.Errorf(kairos.EINVALID, "Unknown thread kind %q. Use one of: %s.", *p.ThreadKind, strings.Join(kairos.ThreadKinds, ", "))
	}
	for _, tz := range []*string{p.SessionTZ, p.DefaultTZ} {
		if tz != nil && *tz != "" {
			if _, err := LoadTZ(*tz); err != nil {
				return err
			}
		}
	}
	if p.Mode != nil && *p.Mode != "" && !validMode(*p.Mode) {
		return kairos.Errorf(kairos.EINVALID, "Unknown clock mode %q. Use off, light or normal.", *p.Mode)
	}
	if err := w.store.SaveClockState(ctx, userKey, threadKey, p); err != nil {
		return fmt.Errorf("save clock state: %w", err)
	}
	return nil
}

// Link joins two identities (user keys of different channels) after both
// approved it (§7.0); from then on their cross-channel timestamps and
// latest actions are shared.
func (w *Wrapper) Link(ctx context.Context, userKeyA, userKeyB string) error {
	if err := w.store.LinkClockUsers(ctx, userKeyA, userKeyB); err != nil {
		return fmt.Errorf("link identities: %w", err)
	}
	return nil
}

// Unlink takes an identity out of its link group.
func (w *Wrapper) Unlink(ctx context.Context, userKey string) error {
	if err := w.store.UnlinkClockUser(ctx, userKey); err != nil {
		return fmt.Errorf("unlink identity: %w", err)
	}
	return nil
}

// OnAgentMessage is §4.5 on_agent_message: it records the thread's
// last_agent_message and last_interaction (at m.SentAt, else now). Pure
// acknowledgements are not substantive and write nothing (§10.3).
func (w *Wrapper) OnAgentMessage(ctx context.Context, m *kairos.AgentMessage) error {
	if m == nil || m.ThreadKey == "" || IsAcknowledgement(m.Text) {
		return nil
	}
	if !w.Policy().Clock.Store.LastMessageTimestamps {
		return nil
	}
	at := m.SentAt
	if at.IsZero() {
		at = w.now()
	}
	if err := w.store.RecordAgentMessage(ctx, kairos.ClockMark{ThreadKey: m.ThreadKey, UserKey: m.UserKey, At: at}); err != nil {
		return fmt.Errorf("clock: %w", err)
	}
	return nil
}

var (
	reSchedule = regexp.MustCompile(`(?i)\b(?:schedul\w*|remind\w*|appointment|meeting|deadline|calendar|alarm|timer|due|time\s*zone|what\s+time|when\s+(?:is|are|do|does|should|can|will)|o'?clock|book\s+(?:a|the)|reschedul\w*)\b`)
	// reCue: states that an open action could explain (§6.5).
	reCue = regexp.MustCompile(`(?i)\b(?:sore|tired|exhausted|sleepy|rested|full|stuffed|hungry|hurts?|ache|aching|sick|back|returned|woke|awake|done|finished|home|made\s+it)\b`)
)

// turn is one user message being processed.
type turn struct {
	pol       *kairos.Policy
	st        *kairos.ClockState
	at        time.Time
	text      string
	userKey   string
	threadKey string
	group     bool
	res       TZResolution
	loc       *time.Location
	mode      string
	known     []string
}

// OnUserMessage is §4.5 on_user_message. The turn's instant is the
// message's own date (received_at; the host clock only when it has none),
// also when it is ahead of the host clock. It:
//
//  1. applies clock directives (kind, tz, mode, clock it, done, cancel);
//  2. resolves the Session TZ by §4.2 precedence;
//  3. records last_user_message and last_interaction for the thread and
//     the user, and last_interaction_any_channel with cross-channel
//     tracking, whatever temporal awareness decides (§4.1);
//  4. stores temporal actions when the policy allows (§6.2 B);
//  5. decides temporal awareness by the check-in rules in order (§5.1);
//  6. renders the envelope: always the turn's time in the Session TZ and
//     the elapsed time; more only when something is relevant (§3, §9).
func (w *Wrapper) OnUserMessage(ctx context.Context, in *kairos.Inbound) (*kairos.ClockEnvelope, error) {
	if in == nil {
		return nil, kairos.Errorf(kairos.EINVALID, "no message")
	}
	pol := w.Policy()
	cp := &pol.Clock
	at := in.Date
	if at.IsZero() {
		at = w.now()
	}
	t := &turn{pol: pol, at: at, text: in.Text, userKey: in.UserKey(), threadKey: in.ThreadKey(), group: in.ChatKind == kairos.ChatGroup}
	if len(t.text) > kairos.MaxInboundText {
		t.text = t.text[:kairos.MaxInboundText]
	}
	st, err := w.store.LoadClockState(ctx, t.userKey, t.threadKey)
	if err != nil {
		return nil, fmt.Errorf("clock: load state: %w", err)
	}
	t.st = st
	env := &kairos.ClockEnvelope{UserKey: t.userKey, ThreadKey: t.threadKey, At: at}

	// 1. Settings directives act first so this turn already uses them.
	// Only the sender's own words direct the clock: forwarded text, a
	// channel's post or a firing's prompt is content (package desk).
	dir := ParseDirective(t.text)
	if in.Origin != kairos.OriginOwn || in.Untrusted != "" {
		dir = Directive{}
	}
	switch dir.Kind {
	case DirKind, DirTZ, DirMode:
		reply, err := w.applySetting(ctx, t, dir)
		if err != nil {
			return nil, err
		}
		env.Reply = reply
	}

	// 2. Session TZ, mode and elapsed times.
	stampZone(t, env)

	// 3. Bookkeeping, always (§4.1, §4.5).
	if cp.Store.LastMessageTimestamps {
		if err := w.store.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: t.threadKey, UserKey: t.userKey, At: at, AnyChannel: cp.CrossChannelTracking}); err != nil {
			return nil, fmt.Errorf("clock: record user message: %w", err)
		}
	}

	// Open actions as they were before this message (§5.1 has_open_action).
	open := visibleActions(st.Actions, t.threadKey, at)

	// 4. Latest actions: directives, then automatic storage.
	if reply, err := w.latestActions(ctx, t, dir, open); err != nil {
		return nil, err
	} else if reply != "" {
		env.Reply = reply
	}

	// 5. Relevance (§5.1).
	pr := parseAnchored(t.text, t.res.TZ, t.known, at)
	timeRef := pr.Kind != KindInvalid && !trivialPhrase(pr.Phrase) || pr.NeedsClarification
	timeRelated := timeRef || reSchedule.MatchString(t.text) || t.res.Question != ""
	taAllowed := cp.Enabled && t.mode != kairos.ClockModeOff
	var outcome CheckinOutcome
	if taAllowed && cp.Checkins.Enabled {
		outcome = EvaluateCheckins(cp.Checkins.Rules, CheckinInput{
			ThreadKind: env.ThreadKind, Last: st.Thread.LastInteraction, LastAnyChannel: st.User.LastInteractionAnyChannel,
			At: at, HasOpenAction: len(open) > 0, Loc: t.loc,
		})
	}
	cue := len(open) > 0 && reCue.MatchString(t.text) && dir.Kind == DirNone
	env.CheckinActions = outcome.Actions
	env.TemporalAwareness = taAllowed && (len(outcome.Actions) > 0 || timeRelated || dir.Kind != DirNone || cue)

	// 6. The envelope.
	env.Text = w.render(t, env, outcome, open, pr, timeRef, timeRelated, cue)
	return env, nil
}

// stampZone resolves the turn's Session TZ (§4.2) from the message, the
// thread, the user and the zones of the people around, and stamps the
// envelope with it, the effective mode and the elapsed times.
func stampZone(t *turn, env *kairos.ClockEnvelope) {
	st, at := t.st, t.at
	for _, p := range st.Participants {
		t.known = append(t.known, p.DefaultTZ)
	}
	for _, u := range st.Linked {
		t.known = append(t.known, u.DefaultTZ)
	}
	t.res = ResolveSessionTZ(t.text, st.Thread.SessionTZ, st.User.DefaultTZ, t.known, at)
	var err error
	if t.loc, err = LoadTZ(t.res.TZ); err != nil {
		t.res.TZ, t.loc = "UTC", time.UTC
	}
	t.mode = EffectiveMode(t.pol, &st.User)
	env.SessionTZ = t.res.TZ
	env.NowISO = ToISO(at, t.res.TZ)
	env.ThreadKind = kindOf(&st.Thread)
	env.Mode = t.mode
	if last := st.Thread.LastInteraction; !last.IsZero() {
		env.Elapsed = FormatElapsed(at.Sub(last))
	}
	if t.pol.Clock.CrossChannelTracking && !st.User.LastInteractionAnyChannel.IsZero() {
		env.ElapsedAnyChannel = FormatElapsed(at.Sub(st.User.LastInteractionAnyChannel))
	}
}

// latestActions applies a clock-it, done or cancel directive (§6), or
// stores an action the message announces when there is no directive; it
// returns the directive's reply.
func (w *Wrapper) latestActions(ctx context.Context, t *turn, dir Directive, open []*kairos.ClockAction) (string, error) {
	switch dir.Kind {
	case DirClockIt:
		return w.clockIt(ctx, t, dir)
	case DirDone, DirCancel:
		return w.closeAction(ctx, t, dir, open)
	case DirNone:
		return "", w.autoClock(ctx, t)
	}
	return "", nil
}

// trivialPhrase: "now" and "today" alone do not make a message
// time-related.
func trivialPhrase(p string) bool {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "now", "today", "":
		return true
	}
	return false
}

// applySetting handles clock: kind|tz|mode; a bad value is answered, not
// returned as an error.
func (w *Wrapper) applySetting(ctx context.Context, t *turn, dir Directive) (string, error) {
	var p kairos.ClockPatch
	arg := dir.Arg
	var reply string
	switch dir.Kind {
	case DirKind:
		if !validKind(arg) {
			return fmt.Sprintf("Unknown thread kind %q. Use one of: %s.", arg, strings.Join(kairos.ThreadKinds, ", ")), nil
		}
		p.ThreadKind = &arg
		reply = "Thread kind set to " + arg + "."
		t.st.Thread.Kind = arg
	case DirTZ:
		if _, err := LoadTZ(arg); err != nil {
			return kairos.ErrorMessage(err), nil
		}
		p.SessionTZ = &arg
		reply = "Session timezone for this thread set to " + arg + "."
		t.st.Thread.SessionTZ = arg
	case DirMode:
		if !validMode(arg) {
			return fmt.Sprintf("Unknown clock mode %q. Use off, light or normal.", arg), nil
		}
		p.Mode = &arg
		reply = "Clock mode set to " + arg + "."
		t.st.User.Mode = arg
	}
	if err := w.store.SaveClockState(ctx, t.userKey, t.threadKey, p); err != nil {
		return "", fmt.Errorf("clock: save setting: %w", err)
	}
	return reply, nil
}

// storeAction clocks an action for the turn's user.
func (w *Wrapper) storeAction(ctx context.Context, t *turn, owner, label, activity, status, source, quote string) (*kairos.ClockAction, error) {
	la := t.pol.Clock.Store.LatestActions
	if activity == "" {
		activity, _, _ = activityOf(label)
	}
	typ := "temporal_action"
	if status == kairos.ActionDone {
		typ = "event"
	}
	var horizon time.Time
	if pr := parseAnchored(quote, t.res.TZ, t.known, t.at); pr.Start != nil && pr.Start.After(t.at) {
		horizon = *pr.Start
		if pr.End != nil {
			horizon = *pr.End
		}
	}
	a := &kairos.ClockAction{
		ID: w.newID(), UserKey: owner, ThreadKey: t.threadKey, Label: label, Type: typ,
		Status: status, Source: source, Activity: activity,
		RecordedAt: t.at, UpdatedAt: t.at,
		ExpiresAt: t.at.Add(ActionTTL(activity, kindOf(&t.st.Thread), source, t.at, horizon)),
	}
	a.ExpectedTypicalMinutes, a.ExpectedMaxMinutes = expectedMinutes(activity, t.st.User.Calibration)
	if la.StoreQuotes {
		a.Quote = quoteOf(quote)
	}
	if err := w.store.AddClockAction(ctx, a, maxItems(la)); err != nil {
		return nil, fmt.Errorf("clock: store action: %w", err)
	}
	return a, nil
}

// humanMinutes renders minutes for people: "45 min", "2 h", "1 h 15 min".
func humanMinutes(m int) string {
	switch {
	case m < 60:
		return strconv.Itoa(m) + " min"
	case m%60 == 0:
		return strconv.Itoa(m/60) + " h"
	}
	return strconv.Itoa(m/60) + " h " + strconv.Itoa(m%60) + " min"
}

// maxItems is latest_actions.max_items, 25 (§0) when unset.
func maxItems(la kairos.LatestActionsPolicy) int {
	if la.MaxItems <= 0 {
		return kairos.DefaultPolicy().Clock.Store.LatestActions.MaxItems
	}
	return la.MaxItems
}

var rePast = regexp.MustCompile(`(?i)^(?:paid|sent|finished|completed|submitted|called|emailed|bought|booked|fixed|done|did|went|ate|had|took|made|got|signed|shipped|deployed|cleaned|cancel(?:l)?ed|returned|delivered|renewed|filed|posted|published|wrote|read|watched|met)\b`)

// clockIt handles clock it / clock: (§6.2 A).
func (w *Wrapper) clockIt(ctx context.Context, t *turn, dir Directive) (string, error) {
	if dir.Arg == "" {
		return "What should I clock? Say for example: clock it: going to the gym.", nil
	}
	la := t.pol.Clock.Store.LatestActions
	if !la.Enabled {
		return "Latest actions are turned off in the policy, so nothing was clocked.", nil
	}
	label, activity, status := normalizeLabel(dir.Arg), "", kairos.ActionPlanned
	if d, ok := DetectTemporalAction(dir.Arg); ok {
		label, activity, status = d.Label, d.Activity, d.Status
	} else if rePast.MatchString(label) {
		status = kairos.ActionDone
	}
	if label == "" {
		return "What should I clock? Say for example: clock it: going to the gym.", nil
	}
	owner := t.userKey
	if dir.Group {
		if !t.group {
			return "Clocking for the group works in a group chat; here, say clock it: " + label + ".", nil
		}
		// §7.3: explicitly group-relevant, so every participant sees it.
		owner = kairos.GroupActionsKey(t.threadKey)
	}
	a, err := w.storeAction(ctx, t, owner, label, activity, status, kairos.ActionSourceClockIt, dir.Arg)
	if err != nil {
		return "", err
	}
	reply := "Clocked: " + a.Label
	if dir.Group {
		reply = "Clocked for the group: " + a.Label
	}
	if a.ExpectedTypicalMinutes > 0 {
		reply += " (usually about " + humanMinutes(a.ExpectedTypicalMinutes) + ")"
	}
	return reply + ".", nil
}

// closeAction handles clock: done|cancel [label]: the newest open action
// whose label contains the filter. Done actions calibrate their activity.
func (w *Wrapper) closeAction(ctx context.Context, t *turn, dir Directive, open []*kairos.ClockAction) (string, error) {
	status, verb := kairos.ActionDone, "done"
	if dir.Kind == DirCancel {
		status, verb = kairos.ActionCanceled, "canceled"
	}
	var target *kairos.ClockAction
	f := strings.ToLower(dir.Arg)
	for _, a := range open {
		if f == "" || strings.Contains(strings.ToLower(a.Label), f) {
			target = a
			break
		}
	}
	if target == nil {
		return "No open clocked action to mark " + verb + ".", nil
	}
	if err := w.store.SetClockActionStatus(ctx, target.UserKey, target.ID, status, t.at); err != nil {
		return "", fmt.Errorf("clock: close action: %w", err)
	}
	if status == kairos.ActionDone && target.Activity != "" {
		prev := t.st.User.Calibration[target.Activity]
		if prev.TypicalMinutes == 0 {
			prev.TypicalMinutes, prev.MaxMinutes = target.ExpectedTypicalMinutes, target.ExpectedMaxMinutes
		}
		if c, ok := Calibrate(prev, t.at.Sub(target.RecordedAt), t.at); ok {
			if err := w.store.SetClockCalibration(ctx, t.userKey, target.Activity, c); err != nil {
				return "", fmt.Errorf("clock: calibrate: %w", err)
			}
		}
	}
	return "Marked " + verb + ": " + target.Label + ".", nil
}

// autoClock stores temporal actions when the policy allows (§6.2 B).
func (w *Wrapper) autoClock(ctx context.Context, t *turn) error {
	la := t.pol.Clock.Store.LatestActions
	if !la.Enabled || !la.AutoClockTemporalActions {
		return nil
	}
	d, ok := DetectTemporalAction(t.text)
	if !ok {
		return nil
	}
	// The same action still open from a moment ago is not stored twice.
	for _, a := range t.st.Actions {
		if a.UserKey == t.userKey && a.Label == d.Label && IsOpen(a, t.at) && t.at.Sub(a.RecordedAt) < time.Hour {
			return nil
		}
	}
	_, err := w.storeAction(ctx, t, t.userKey, d.Label, d.Activity, d.Status, kairos.ActionSourceAuto, t.text)
	return err
}

// participantsWithTZ lists the thread's participants with a known zone,
// sorted, the speaker included.
func participantsWithTZ(t *turn) []kairos.ClockParticipant {
	var out []kairos.ClockParticipant
	seen := false
	for _, p := range t.st.Participants {
		if p.UserKey == t.userKey {
			seen = true
			p.DefaultTZ = t.st.User.DefaultTZ
		}
		if p.DefaultTZ != "" && ValidTZ(p.DefaultTZ) {
			out = append(out, p)
		}
	}
	if !seen && t.st.User.DefaultTZ != "" && ValidTZ(t.st.User.DefaultTZ) {
		out = append(out, kairos.ClockParticipant{UserKey: t.userKey, DefaultTZ: t.st.User.DefaultTZ})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UserKey < out[j].UserKey })
	return out
}
