package desk

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
	"github.com/kairos-agent/kairos/schedules"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// Reminders is the desk's side of the schedules: /reminders and the
// buttons of a firing (Done, Snooze, Skip next) and of the list (Cancel),
// the same at every door.
type Reminders struct {
	Store  kairos.ScheduleStore
	Policy func() *kairos.Policy
	// Zone is the thread's Session TZ ("" when unknown).
	Zone func(ctx context.Context, threadKey string) string
	// Wake tells the runner a schedule changed.
	Wake func()
	Now  func() time.Time
}

// Command is /reminders: the user's schedules of this thread (in a group,
// that group's only) with their next runs in the thread's zone and a
// Cancel button each.
func (r *Reminders) Command() Command {
	return Command{Name: "reminders", Description: "Your reminders and scheduled tasks, each with a Cancel button",
		Reply: r.list}
}

func (r *Reminders) list(ctx context.Context, in *kairos.Inbound, _ string) (*kairos.Outgoing, error) {
	if !r.Policy().Schedules.Enabled {
		return &kairos.Outgoing{Text: "Reminders are turned off by the operator."}, nil
	}
	list, err := r.Store.Schedules(ctx, kairos.ScheduleFilter{UserID: in.UserID, ThreadKey: in.ThreadKey(), Limit: 50})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return &kairos.Outgoing{Text: "You have no reminders or scheduled tasks."}, nil
	}
	tz := r.Zone(ctx, in.ThreadKey())
	out := &kairos.Outgoing{}
	var sb strings.Builder
	sb.WriteString("Your schedules:\n")
	for i, s := range list {
		zone := s.TZ
		if tz != "" {
			zone = tz
		}
		fmt.Fprintf(&sb, "%d. %s — %s: %s", i+1, schedtool.Label(s.NextRun, zone), s.Kind, schedtool.ViewOf(s).Text)
		if s.Repeat != "" {
			fmt.Fprintf(&sb, " (%s)", s.Repeat)
		}
		sb.WriteString("\n")
		out.Buttons = append(out.Buttons, []kairos.Button{{Text: fmt.Sprintf("Cancel %d", i+1), Data: ButtonPrefix + "cancel:" + s.PublicID()}})
	}
	out.Text = sb.String()
	return out, nil
}

var errUnknownButton = kairos.Errorf(kairos.EINVALID, "Unknown button.")

// Button handles Done, Snooze, Skip next and Cancel (data without the
// prefix). The schedule is looked up among the presser's own in the chat
// the button is in, before anything of it is read: another's is "not
// found". closeKB says the message's buttons are spent.
func (r *Reminders) Button(ctx context.Context, from, chat, msgID int64, data string) (text string, closeKB bool, err error) {
	parts := strings.Split(data, ":")
	if len(parts) < 2 || parts[1] == "" {
		return "", false, errUnknownButton
	}
	s, err := r.Store.OwnSchedule(ctx, parts[1], kairos.ScheduleScope{UserID: from, ChatID: chat})
	if err != nil {
		return "", false, kairos.Errorf(kairos.ENOTFOUND, "Only the person who set it can change it.")
	}
	switch parts[0] {
	case "done":
		return "Done.", true, nil
	case "cancel":
		if err := r.Store.CancelSchedule(ctx, s.ID, 0); err != nil {
			return "", false, err
		}
		r.Wake()
		return "Cancelled.", true, nil
	case "skip":
		return r.skip(ctx, s)
	case "snooze":
		if len(parts) != 3 {
			return "", false, errUnknownButton
		}
		return r.snooze(ctx, s, parts[2], msgID)
	}
	return "", false, errUnknownButton
}

// skip moves a repeating schedule past its next occurrence.
func (r *Reminders) skip(ctx context.Context, s *kairos.Schedule) (string, bool, error) {
	if s.Status != kairos.ScheduleActive || s.RRule == "" {
		return "", false, kairos.Errorf(kairos.ECONFLICT, "Nothing to skip: it does not repeat any more.")
	}
	next, _, err := schedules.NextRun(ctx, s, s.NextRun)
	if err != nil {
		return "", false, err
	}
	if next.IsZero() {
		if err := r.Store.CancelSchedule(ctx, s.ID, 0); err != nil {
			return "", false, err
		}
		return "Skipped; that was the last one.", true, nil
	}
	if err := r.Store.Reschedule(ctx, s.ID, s.Version, next); err != nil {
		return "", false, err
	}
	r.Wake()
	return "Skipped; next " + schedtool.Label(next, s.TZ) + ".", false, nil
}

// snooze is a create: a one-off copy of s at the chosen time, under the
// user's cap. A cancelled schedule cannot be snoozed; the copy's id is
// derived from s and the message the button is on, so a double press
// (or Snooze then Snooze 1 h on one message) makes one snooze.
func (r *Reminders) snooze(ctx context.Context, s *kairos.Schedule, span string, msgID int64) (string, bool, error) {
	if s.Status == kairos.ScheduleCancelled {
		return "", true, kairos.Errorf(kairos.ECONFLICT, "It was cancelled; nothing to snooze.")
	}
	loc, err := time.LoadLocation(s.TZ)
	if err != nil {
		loc = time.UTC
	}
	now := r.Now()
	at, ok := snoozeUntil(now, loc, span)
	if !ok {
		return "", false, errUnknownButton
	}
	ref := snoozeRef(s, msgID)
	scope := kairos.ScheduleScope{UserID: s.UserID, ChatID: s.ChatID}
	if prev, err := r.Store.OwnSchedule(ctx, ref, scope); err == nil {
		return "Already snoozed until " + schedtool.Label(prev.NextRun, prev.TZ) + ".", true, nil
	}
	one := &kairos.Schedule{Ref: ref, UserID: s.UserID, ChatID: s.ChatID, ThreadKey: s.ThreadKey, Kind: kairos.ScheduleReminder,
		Text: snoozeText(s, now), TZ: s.TZ, NextRun: at, Tainted: s.Tainted, Start: at.In(loc).Format(schedules.WallLayout)}
	if err := r.Store.CreateSchedule(ctx, one, r.Policy().Schedules.MaxPerUser); err != nil {
		if prev, perr := r.Store.OwnSchedule(ctx, ref, scope); perr == nil { // the other press won
			return "Already snoozed until " + schedtool.Label(prev.NextRun, prev.TZ) + ".", true, nil
		}
		return "", false, err
	}
	r.Wake()
	return "Snoozed until " + schedtool.Label(at, s.TZ) + ".", true, nil
}

// snoozeUntil is when a snooze of span ends: 10 minutes, an hour, or the
// same wall-clock time tomorrow in the schedule's zone.
func snoozeUntil(now time.Time, loc *time.Location, span string) (time.Time, bool) {
	switch span {
	case "10m":
		return now.Add(10 * time.Minute), true
	case "1h":
		return now.Add(time.Hour), true
	case "1d":
		l := now.In(loc)
		at, _ := calendar.ResolveLocal(loc, l.Year(), l.Month(), l.Day()+1, l.Hour(), l.Minute(), l.Second())
		return at, true
	}
	return time.Time{}, false
}

// snoozeRef is the snoozed copy's public id, derived from s and the
// message the button is on (its version when there is none).
func snoozeRef(s *kairos.Schedule, msgID int64) string {
	key := fmt.Sprintf("snooze:%s:%d", s.PublicID(), msgID)
	if msgID == 0 {
		key = fmt.Sprintf("snooze:%s:v%d", s.PublicID(), s.Version)
	}
	sum := sha256.Sum256([]byte(key))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// snoozeText is what a snoozed copy of s says: its title (schedtool.Title);
// a watching cell's notification is not kept, so what it watches, if it
// says, and when it was snoozed (never the cell's code).
func snoozeText(s *kairos.Schedule, now time.Time) string {
	if s.Kind == kairos.ScheduleCell {
		what := "Watching cell"
		if s.Text != "" {
			what += " (" + s.Text + ")"
		}
		return what + ": the notification you snoozed on " + schedtool.Label(now, s.TZ)
	}
	return schedtool.Title(s)
}
