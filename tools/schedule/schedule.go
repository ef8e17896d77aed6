package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// Parsed is a time expression resolved against a zone and an instant.
type Parsed struct {
	Start *time.Time
	// Floating says the text named a wall-clock time ("tomorrow at 9")
	// that means nothing without the user's zone.
	Floating              bool
	NeedsClarification    bool
	ClarificationQuestion string
	// Repeat is the RRULE the expression itself states ("every weekday
	// at 8am"); used when the call gives no repeat.
	Repeat string
	// DayOnly says the expression named a day or days but no time of day
	// ("friday", "next week"): Start is that day's midnight, never a time
	// to fire at; End closes the stretch.
	DayOnly bool
	End     *time.Time
	// Assumptions are what the reading took for granted ("read
	// 'thrusday' as Thursday"); the approval states them.
	Assumptions []string
}

// Repeat is a parsed recurrence: a normalized RRULE and, when the words
// named one, the time of day.
type Repeat struct {
	RRule        string
	Hour, Minute int
	HasTime      bool
}

// Shape is what Inspect learnt about a rule.
type Shape struct {
	RRule  string        // the rule to store (COUNT written as UNTIL)
	MinGap time.Duration // smallest gap over a full cycle of the rule
}

// Config wires the tool.
type Config struct {
	Store  kairos.ScheduleStore
	Policy func() *kairos.Policy
	// Zone returns the zone of the call's user in its thread ("" when
	// unknown: no thread, user or stated zone, only the UTC fallback).
	Zone func(ctx context.Context, inv *kairos.ToolInvocation) (string, error)
	// Parse resolves a time expression anchored to tz at ref.
	Parse func(text, tz string, ref time.Time) Parsed
	// ParseRepeat reads an RRULE or a plain repeat form (EINVALID).
	ParseRepeat func(s string) (Repeat, error)
	// Occurrences returns up to n instants of rule started at the wall
	// time start in loc, strictly after after.
	Occurrences func(ctx context.Context, rule string, start time.Time, loc *time.Location, after time.Time, n int) ([]time.Time, error)
	// Inspect checks a rule started at the wall time start before it is
	// stored (EINVALID) and returns the rule to store and its smallest
	// gap over a full cycle.
	Inspect func(ctx context.Context, rule string, start time.Time) (Shape, error)
	// ClassifyCell says whether a watching cell's code may write to the
	// network under the policy (as code.execute classifies it) and why.
	ClassifyCell func(code string) (write bool, reason string)
	// Wake tells the runner a schedule changed.
	Wake   func()
	Logger *slog.Logger
}

// Tool is the schedule tool.
type Tool struct{ cfg Config }

var _ kairos.Tool = (*Tool)(nil)

// New returns the tool.
func New(cfg Config) *Tool {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Wake == nil {
		cfg.Wake = func() {}
	}
	return &Tool{cfg: cfg}
}

// ZoneQuestion is asked when a schedule needs the user's zone and none
// is known; the answer (a city or an IANA zone) is kept as their zone.
const ZoneQuestion = "Where are you? Tell me your city or time zone (for example Lisbon or Europe/Lisbon) so that I set this at the right local time."

// WallLayout is how a schedule's Start is written.
const WallLayout = "2006-01-02T15:04:05"

// Label is the confirmation form of a time: "Wed 25 Nov 09:00 Europe/Lisbon".
func Label(t time.Time, tz string) string {
	if loc, err := time.LoadLocation(tz); err == nil {
		t = t.In(loc)
	}
	return t.Format("Mon 2 Jan 15:04") + " " + tz
}

// specFor is the tool's schema; without cells (features.cli_exec off)
// watching cells are absent from it: no word of them, no `code`.
func specFor(cells bool) kairos.ToolSpec {
	kinds := "a reminder (text) or a task (task: a prompt you will run at that time; its answer goes to this chat)"
	code, text := "", "the reminder"
	if cells {
		kinds = "a reminder (text), a task (task: a prompt you will run at that time; " +
			"its answer goes to this chat) or a watching cell (code: JavaScript run at each time; it notifies the user only when it calls " +
			"output({notify: \"...\"}); text: what it watches)"
		code = `
		"code":{"type":"string","description":"a watching cell"},`
		text = "the reminder; for a cell, what it watches in the user's words"
	}
	return kairos.ToolSpec{
		Name: "schedule",
		Description: "Reminders and scheduled work. create: " + kinds + ", at `when` (the user's words, e.g. \"tomorrow at 9\", in the user's zone; " +
			"`when_iso`: your own reading), optionally repeating (`repeat`). " +
			"The user approves before it exists. list: the user's schedules. cancel: schedule_id.",
		Parameters: toolutil.Schema(`{"type":"object","properties":{
		"action":{"type":"string","enum":["create","list","cancel"]},
		"when":{"type":"string","description":"natural language or RFC 3339"},
		"when_iso":{"type":"string","description":"RFC 3339"},
		"repeat":{"type":"string","description":"RFC 5545 RRULE or plain words: every weekday at 8am, every 2 weeks on Monday, on the last day of every month"},
		"text":{"type":"string","description":"` + text + `"},
		"task":{"type":"string","description":"a prompt run at that time"},` + code + `
		"schedule_id":{"type":"string","description":"the id from action list"}},
		"required":["action"],"additionalProperties":false}`),
	}
}

var specs = [2]kairos.ToolSpec{specFor(false), specFor(true)}

// Spec returns the tool's schema under the current policy.
func (t *Tool) Spec() kairos.ToolSpec {
	if t.policy().Features.CLIExec {
		return specs[1]
	}
	return specs[0]
}

// cues are the words that offer schedule to a turn (tools.Offered):
// reminders, times and repetitions; so does any clock time or span
// (tools.MentionsTime). Without them it is reachable with more_tools, and
// offered again while the session has called it.
var cues = []string{"remind", "schedul", "alarm", "timer", "every", "daily", "weekly", "monthly", "yearly", "tomorrow",
	"tonight", "later", "morning", "evening", "noon", "midnight", "weekday", "weekend", "monday", "tuesday", "wednesday",
	"thursday", "friday", "saturday", "sunday", "minute", "hour", "clock", "watch", "notif", "alert", "recurr", "repeat",
	"cancel", "agenda", "appointment", "deadline", "calendar", "ping", "nudge", "wake", "forget",
	"until", "till", "tmrw", "tomorow", "weeks", "tonite", "asap"}

// CuedBy implements tools.Offered's on-demand offer.
func (t *Tool) CuedBy(m tools.Message) bool {
	return tools.HasCue(m.Words, cues) || tools.MentionsTime(m.Words)
}

type args struct {
	Action     string `json:"action"`
	When       string `json:"when"`
	WhenISO    string `json:"when_iso"`
	Repeat     string `json:"repeat"`
	Text       string `json:"text"`
	Task       string `json:"task"`
	Code       string `json:"code"`
	ScheduleID ref    `json:"schedule_id"`
}

// ref is a schedule id as the model sends it: a string, or a number for
// a schedule stored before ids were random.
type ref string

func (r *ref) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = ref(strings.TrimSpace(s))
		return nil
	}
	var n toolutil.Int
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	if n.Set {
		*r = ref(strconv.Itoa(n.Value))
	}
	return nil
}

// View is a schedule as the model and the CLI see it.
type View struct {
	ID        string `json:"id"`
	UserID    int64  `json:"user_id,omitempty"`
	ThreadKey string `json:"thread_key,omitempty"`
	Kind      string `json:"kind"`
	NextRun   string `json:"next_run"`
	TZ        string `json:"tz"`
	Repeat    string `json:"repeat,omitempty"`
	Text      string `json:"text"`
	Label     string `json:"label,omitempty"`
}

// ViewOf renders a schedule: next_run in RFC 3339 with the zone's offset.
func ViewOf(s *kairos.Schedule) View {
	next := s.NextRun
	if loc, err := time.LoadLocation(s.TZ); err == nil {
		next = next.In(loc)
	}
	return View{ID: s.PublicID(), UserID: s.UserID, ThreadKey: s.ThreadKey, Kind: s.Kind, NextRun: next.Format(time.RFC3339),
		TZ: s.TZ, Repeat: s.Repeat, Text: Title(s)}
}

// UntitledCell is the title of a watching cell stored without one: its
// code is never shown in its place.
const UntitledCell = "a watching cell with no description"

// Title is what a person reads for a schedule: a reminder's text, a
// task's first line, a watching cell's description (what the user asked
// to watch). Code never appears in it: a cell's source is shown whole,
// and only, in its create approval.
func Title(s *kairos.Schedule) string {
	switch {
	case s.Text != "":
		return s.Text
	case s.Kind == kairos.ScheduleCell || s.Code != "":
		return UntitledCell
	}
	return firstLine(s.Task)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}

type result struct {
	Success               bool     `json:"success"`
	Assumptions           []string `json:"assumptions,omitempty"`
	Schedule              *View    `json:"schedule,omitempty"`
	Schedules             []View   `json:"schedules,omitempty"`
	NeedsClarification    bool     `json:"needs_clarification,omitempty"`
	ClarificationQuestion string   `json:"clarification_question,omitempty"`
	Error                 string   `json:"error,omitempty"`
}

func decode(inv *kairos.ToolInvocation) (args, error) {
	var a args
	if err := toolutil.DecodeArgs(inv.Arguments, &a); err != nil {
		return a, err
	}
	if err := toolutil.OneOf("action", a.Action, "create", "list", "cancel"); err != nil {
		return a, err
	}
	return a, nil
}

// Action names the call's action; create and cancel are impactful and
// their reason states what will happen, with the resolved time.
func (t *Tool) Action(ctx context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	a, err := decode(inv)
	if err != nil {
		return kairos.ToolAction{}, err
	}
	switch a.Action {
	case "list":
		return kairos.ToolAction{Name: kairos.ActionScheduleList, Capability: kairos.CapSchedule}, nil
	case "cancel":
		// Only the caller's own schedule in this thread is read; another's
		// id is not found, and nothing of it reaches the approval.
		s, err := t.own(ctx, inv, a)
		if err != nil {
			return kairos.ToolAction{Name: kairos.ActionScheduleCancel, Capability: kairos.CapSchedule}, nil
		}
		reason := fmt.Sprintf("cancels the %s %q (next %s)", s.Kind, ViewOf(s).Text, Label(s.NextRun, s.TZ))
		return kairos.ToolAction{Name: kairos.ActionScheduleCancel, Impactful: true, Reason: reason, Capability: kairos.CapSchedule,
			Summary: fmt.Sprintf("Cancel the %s “%s” (next %s)?", kairos.KindLabel(s.Kind), ViewOf(s).Text, Label(s.NextRun, s.TZ))}, nil
	}
	act := kairos.ToolAction{Name: kairos.ActionScheduleCreate, Capability: kairos.CapSchedule, Impactful: true}
	// An untrusted turn's rule is expanded only after the approval: what
	// a web page asks for costs nothing until the user agrees.
	expand := !inv.Tainted
	s, notes, clar, err := t.plan(ctx, inv, a, expand)
	switch {
	case err != nil || clar != "":
		// Nothing would be created: the call answers with the error or
		// the question, so there is nothing to approve yet.
		act.Impactful = false
	default:
		what := "a " + kairos.KindLabel(s.Kind)
		act.Reason = fmt.Sprintf("creates %s %q for %s", what, ViewOf(s).Text, Label(s.NextRun, s.TZ))
		if s.Repeat != "" {
			act.Reason += ", repeating " + s.Repeat
			if !expand {
				act.Reason = fmt.Sprintf("creates %s %q repeating %s from %s (its occurrences are checked after approval)", what, ViewOf(s).Text, s.Repeat, Label(s.NextRun, s.TZ))
			}
		}
		if len(notes) > 0 {
			act.Reason += " (" + strings.Join(notes, "; ") + ")"
		}
		act.Summary = fmt.Sprintf("Create %s “%s” for %s", what, ViewOf(s).Text, Label(s.NextRun, s.TZ))
		if s.Repeat != "" {
			act.Summary += ", repeating " + s.Repeat
		}
		act.Summary += "?"
		switch s.Kind {
		case kairos.ScheduleCell:
			t.cellAction(&act, s, inv)
		case kairos.ScheduleReminder:
			// A reminder only speaks at its time: one grant covers the
			// user's reminders here. A task (a prompt run later, with
			// tools) and a watching cell (code) are approved each time.
			act.Target, act.TargetLabel = "reminders", "creating reminders (not tasks or watching cells)"
		}
	}
	return act, nil
}

// Call performs the call.
func (t *Tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	a, err := decode(inv)
	if err != nil {
		return nil, err
	}
	uid, err := userID(inv.UserKey)
	if err != nil {
		return nil, err
	}
	switch a.Action {
	case "list":
		list, err := t.cfg.Store.Schedules(ctx, kairos.ScheduleFilter{UserID: uid, ThreadKey: inv.ThreadKey})
		if err != nil {
			return nil, err
		}
		views := make([]View, 0, len(list))
		for _, s := range list {
			v := ViewOf(s)
			v.UserID, v.ThreadKey = 0, ""
			v.Label = Label(s.NextRun, s.TZ)
			views = append(views, v)
		}
		return toolutil.Result(result{Success: true, Schedules: views}, false)
	case "cancel":
		s, err := t.own(ctx, inv, a)
		if err != nil {
			return nil, err
		}
		if err := t.cfg.Store.CancelSchedule(ctx, s.ID, uid); err != nil {
			return nil, err
		}
		t.cfg.Wake()
		return toolutil.Result(result{Success: true}, false)
	}
	s, notes, clar, err := t.plan(ctx, inv, a, true)
	if err != nil {
		return nil, err
	}
	if clar != "" {
		return toolutil.Result(result{Success: false, NeedsClarification: true, ClarificationQuestion: clar}, false)
	}
	if err := t.cfg.Store.CreateSchedule(ctx, s, t.policy().Schedules.MaxPerUser); err != nil {
		return nil, err
	}
	t.cfg.Wake()
	v := ViewOf(s)
	v.UserID, v.ThreadKey = 0, ""
	v.Label = Label(s.NextRun, s.TZ)
	return toolutil.Result(result{Success: true, Schedule: &v, Assumptions: notes}, false)
}

// own finds the call's schedule_id among the caller's schedules of this
// thread (ENOTFOUND otherwise, EINVALID without an id).
func (t *Tool) own(ctx context.Context, inv *kairos.ToolInvocation, a args) (*kairos.Schedule, error) {
	if a.ScheduleID == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "cancel needs schedule_id (see action list)")
	}
	uid, err := userID(inv.UserKey)
	if err != nil {
		return nil, err
	}
	return t.cfg.Store.OwnSchedule(ctx, string(a.ScheduleID), kairos.ScheduleScope{UserID: uid, ThreadKey: inv.ThreadKey})
}

func (t *Tool) policy() *kairos.Policy {
	if t.cfg.Policy == nil {
		return kairos.DefaultPolicy()
	}
	return t.cfg.Policy()
}

func userID(userKey string) (int64, error) {
	_, id, _ := strings.Cut(userKey, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n == 0 {
		return 0, kairos.Errorf(kairos.EINVALID, "schedules need a known user")
	}
	return n, nil
}

// ChatOf returns the chat id and topic of a Telegram thread key.
func ChatOf(threadKey string) (chatID, topicID int64, ok bool) {
	parts := strings.Split(threadKey, ":")
	// agent:<id>:telegram:dm:<user> | agent:<id>:telegram:group:<chat>[:topic:<t>]
	if len(parts) < 5 || parts[0] != "agent" || parts[2] != kairos.ChannelTelegram {
		return 0, 0, false
	}
	chat, err := strconv.ParseInt(parts[4], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if len(parts) == 7 && parts[5] == "topic" {
		topicID, _ = strconv.ParseInt(parts[6], 10, 64)
	}
	return chat, topicID, true
}

// plan resolves a create call into the schedule it would store with the
// assumptions its time took (stated in the approval), or a clarification
// question, or an EINVALID error. It stores nothing.
// Without expand a repeat rule is parsed but not expanded: NextRun is its
// start.
func (t *Tool) plan(ctx context.Context, inv *kairos.ToolInvocation, a args, expand bool) (*kairos.Schedule, []string, string, error) {
	s, err := t.draft(inv, a)
	if err != nil {
		return nil, nil, "", err
	}
	loc, q, err := t.location(ctx, inv, a, s)
	if err != nil || q != "" {
		return nil, nil, q, err
	}
	start, notes, q, err := t.when(a, s, loc, inv.Now)
	if err != nil || q != "" {
		return nil, nil, q, err
	}
	if err := t.timing(ctx, s, start, loc, inv.Now, expand); err != nil {
		return nil, nil, "", err
	}
	return s, notes, "", nil
}

// draft is plan's first step: whose schedule it is, where it is
// delivered, and its one kind (reminder, task or watching cell), with no
// time resolved yet.
func (t *Tool) draft(inv *kairos.ToolInvocation, a args) (*kairos.Schedule, error) {
	if a.Action != "create" {
		return nil, kairos.Errorf(kairos.EINVALID, "not a create call")
	}
	uid, err := userID(inv.UserKey)
	if err != nil {
		return nil, err
	}
	chat, _, ok := ChatOf(inv.ThreadKey)
	if !ok && strings.HasPrefix(inv.ThreadKey, "agent:") && strings.Contains(inv.ThreadKey, ":"+kairos.ChannelCLI+":dm:") {
		chat, ok = uid, true // the terminal (kairos chat), which delivers its own
	}
	if !ok {
		return nil, kairos.Errorf(kairos.EINVALID, "schedules are delivered on Telegram; this chat cannot receive them")
	}
	s := &kairos.Schedule{UserID: uid, ChatID: chat, ThreadKey: inv.ThreadKey, Tainted: inv.Tainted,
		Text: strings.TrimSpace(a.Text), Task: strings.TrimSpace(a.Task), Code: strings.TrimSpace(a.Code), Repeat: strings.TrimSpace(a.Repeat)}
	if s.Code != "" {
		write, _ := t.classifyCell(s.Code)
		s.NetWrite = write && !inv.Tainted
	}
	n := 0
	// A cell's text is its title, not a second kind.
	for k, v := range map[string]string{kairos.ScheduleReminder: s.Text, kairos.ScheduleTask: s.Task, kairos.ScheduleCell: s.Code} {
		if v != "" && (k != kairos.ScheduleReminder || s.Code == "") {
			n++
			s.Kind = k
		}
	}
	cells := t.policy().Features.CLIExec
	if n != 1 && !cells {
		return nil, kairos.Errorf(kairos.EINVALID, "create needs exactly one of text (a reminder) or task (a prompt)")
	}
	if n != 1 {
		return nil, kairos.Errorf(kairos.EINVALID, "create needs exactly one of text (a reminder), task (a prompt) or code (a watching cell)")
	}
	// features.cli_exec (seed 004): with code cells off, watching cells do
	// not exist (nor in the spec, specFor).
	if s.Kind == kairos.ScheduleCell && !cells {
		return nil, kairos.Errorf(kairos.EINVALID, "watching cells are off here (features.cli_exec is false); a reminder or a task works")
	}
	if s.Kind == kairos.ScheduleCell && s.Text == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "a watching cell needs text: what it watches, in the user's words (e.g. \"tell me when the BTC price drops below 90k\"); the user sees it, never the code")
	}
	if strings.TrimSpace(a.When) == "" && strings.TrimSpace(a.WhenISO) == "" && s.Repeat == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "create needs when (e.g. \"tomorrow at 9\") or repeat (e.g. \"every weekday at 8am\")")
	}
	return s, nil
}

// location is the zone the schedule's wall-clock times are read in: the
// user's, or UTC for an instant; without a known zone anything else is a
// question (ZoneQuestion). It sets s's TZ.
func (t *Tool) location(ctx context.Context, inv *kairos.ToolInvocation, a args, s *kairos.Schedule) (*time.Location, string, error) {
	tz, err := t.cfg.Zone(ctx, inv)
	if err != nil {
		return nil, "", err
	}
	if tz == "" {
		// Only an instant ("in 20 minutes", RFC 3339 with an offset) means
		// the same everywhere; a wall-clock time or a repeat needs the
		// user's zone, and UTC would be a guess (CLOCK.md §4.2-4.3).
		if w := strings.TrimSpace(a.When); s.Repeat != "" || w == "" || t.cfg.Parse(w, "", inv.Now).Floating {
			return nil, ZoneQuestion, nil
		}
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, "", kairos.Errorf(kairos.EINVALID, "zone %q: %v", tz, err)
	}
	s.TZ = tz
	return loc, "", nil
}

// timing sets s's start and next run: a one-off at start (which must be in
// the future), a repeat from its rule (start, or today at the rule's time
// of day), expanded to its first occurrence when expand is set.
func (t *Tool) timing(ctx context.Context, s *kairos.Schedule, start time.Time, loc *time.Location, now time.Time, expand bool) error {
	if s.Repeat == "" {
		if !start.After(now) {
			return kairos.Errorf(kairos.EINVALID, "%s is in the past", Label(start, s.TZ))
		}
		s.Start, s.NextRun = start.Format(WallLayout), start
		return nil
	}
	rr, err := t.cfg.ParseRepeat(s.Repeat)
	if err != nil {
		return err
	}
	s.RRule = rr.RRule
	if start.IsZero() {
		start = now.In(loc)
		if !rr.HasTime {
			return kairos.Errorf(kairos.EINVALID, "repeat %q needs a time of day (e.g. \"at 8am\") or a when", s.Repeat)
		}
	}
	if rr.HasTime {
		start = time.Date(start.Year(), start.Month(), start.Day(), rr.Hour, rr.Minute, 0, 0, time.UTC)
	}
	wall := time.Date(start.Year(), start.Month(), start.Day(), start.Hour(), start.Minute(), start.Second(), 0, time.UTC)
	s.Start = wall.Format(WallLayout)
	if !expand {
		s.NextRun, _ = calendar.ResolveLocal(loc, wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second())
		return nil
	}
	next, err := t.expand(ctx, s, wall, loc, now)
	if err != nil {
		return err
	}
	s.NextRun = next
	return nil
}

// expand checks s's rule (its whole cycle against the kind's floor) and
// returns its first occurrence after now.
func (t *Tool) expand(ctx context.Context, s *kairos.Schedule, wall time.Time, loc *time.Location, now time.Time) (time.Time, error) {
	sh, err := t.cfg.Inspect(ctx, s.RRule, wall)
	if err != nil {
		return time.Time{}, err
	}
	pol := t.policy().Schedules
	if min := pol.MinIntervalFor(s.Kind); sh.MinGap > 0 && sh.MinGap < min.Approx() {
		return time.Time{}, kairos.Errorf(kairos.EINVALID, "a recurring %s may repeat at most every %s, and %q repeats after %s (policy schedules.%s)",
			s.Kind, min, s.Repeat, sh.MinGap, minKey(s.Kind, pol))
	}
	s.RRule = sh.RRule
	occ, err := t.cfg.Occurrences(ctx, s.RRule, wall, loc, now, 1)
	if err != nil {
		return time.Time{}, err
	}
	if len(occ) == 0 {
		return time.Time{}, kairos.Errorf(kairos.EINVALID, "repeat %q has no occurrence after now", s.Repeat)
	}
	return occ[0], nil
}

// cellAction is a watching cell's approval: the whole code and the
// resolved time as its detail (a front end sends a long one as a
// document), and code.network_write when the code may write to the
// network. A cell from a tainted turn keeps the taint and only reads.
func (t *Tool) cellAction(act *kairos.ToolAction, s *kairos.Schedule, inv *kairos.ToolInvocation) {
	when := "first run " + Label(s.NextRun, s.TZ)
	if s.Repeat != "" {
		when += ", repeating " + s.Repeat
	}
	write, why := t.classifyCell(s.Code)
	switch {
	case write && s.NetWrite:
		act.Name = kairos.ActionCodeNetworkWrite
		act.Reason += "; " + why
	case write:
		act.Reason += "; it was written after untrusted content (" + inv.TaintSource + "), so it may only read (GET), never send"
	}
	act.Detail = "Watching cell, " + when + ":\n\n" + s.Code
}

func (t *Tool) classifyCell(code string) (bool, string) {
	if t.cfg.ClassifyCell == nil {
		return false, ""
	}
	return t.cfg.ClassifyCell(code)
}

// minKey names the policy key that set a kind's floor.
func minKey(kind string, p kairos.SchedulesPolicy) string {
	switch {
	case kind == kairos.ScheduleReminder:
		return "reminder_min_interval"
	case kind == kairos.ScheduleTask && p.TaskMinInterval.Approx() > 0:
		return "task_min_interval"
	case kind == kairos.ScheduleCell && p.CellMinInterval.Approx() > 0:
		return "cell_min_interval"
	}
	return "min_interval"
}
