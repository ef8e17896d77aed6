package main

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// scheduleButton handles Done, Snooze, Skip next and Cancel. The
// schedule is looked up among the presser's own in the chat the button
// is in, before anything of it is read: another's is "not found".
func (m *Main) scheduleButton(ctx context.Context, c *core, from, chat, msgID int64, data string) (string, bool, error) {
	parts := strings.Split(data, ":")
	if len(parts) < 2 || parts[1] == "" {
		return "", false, kairos.Errorf(kairos.EINVALID, "Unknown button.")
	}
	st := c.sched.store
	s, err := st.OwnSchedule(ctx, parts[1], kairos.ScheduleScope{UserID: from, ChatID: chat})
	if err != nil {
		return "", false, kairos.Errorf(kairos.ENOTFOUND, "Only the person who set it can change it.")
	}
	id := s.ID
	switch parts[0] {
	case "done":
		return "Done.", true, nil
	case "cancel":
		if err := st.CancelSchedule(ctx, id, 0); err != nil {
			return "", false, err
		}
		c.sched.wake()
		return "Cancelled.", true, nil
	case "skip":
		if s.Status != kairos.ScheduleActive || s.RRule == "" {
			return "", false, kairos.Errorf(kairos.ECONFLICT, "Nothing to skip: it does not repeat any more.")
		}
		next, _, err := schedules.NextRun(ctx, s, s.NextRun)
		if err != nil {
			return "", false, err
		}
		if next.IsZero() {
			if err := st.CancelSchedule(ctx, id, 0); err != nil {
				return "", false, err
			}
			return "Skipped; that was the last one.", true, nil
		}
		if err := st.Reschedule(ctx, id, s.Version, next); err != nil {
			return "", false, err
		}
		c.sched.wake()
		return "Skipped; next " + schedtool.Label(next, s.TZ) + ".", false, nil
	case "snooze":
		if len(parts) != 3 {
			return "", false, kairos.Errorf(kairos.EINVALID, "Unknown button.")
		}
		return m.snooze(ctx, c, s, parts[2], msgID)
	}
	return "", false, kairos.Errorf(kairos.EINVALID, "Unknown button.")
}

// snooze is a create: a one-off copy of s at the chosen time, under the
// user's cap. A cancelled schedule cannot be snoozed; the copy's id is
// derived from s and the message the button is on, so a double press
// (or Snooze then Snooze 1 h on one message) makes one snooze.
func (m *Main) snooze(ctx context.Context, c *core, s *kairos.Schedule, span string, msgID int64) (string, bool, error) {
	if s.Status == kairos.ScheduleCancelled {
		return "", true, kairos.Errorf(kairos.ECONFLICT, "It was cancelled; nothing to snooze.")
	}
	loc, err := time.LoadLocation(s.TZ)
	if err != nil {
		loc = time.UTC
	}
	now := c.now()
	var at time.Time
	switch span {
	case "10m":
		at = now.Add(10 * time.Minute)
	case "1h":
		at = now.Add(time.Hour)
	case "1d": // the same wall-clock time tomorrow in the schedule's zone
		l := now.In(loc)
		at, _ = kairos.ResolveLocal(loc, l.Year(), l.Month(), l.Day()+1, l.Hour(), l.Minute(), l.Second())
	default:
		return "", false, kairos.Errorf(kairos.EINVALID, "Unknown button.")
	}
	key := fmt.Sprintf("snooze:%s:%d", s.PublicID(), msgID)
	if msgID == 0 {
		key = fmt.Sprintf("snooze:%s:v%d", s.PublicID(), s.Version)
	}
	sum := sha256.Sum256([]byte(key))
	ref := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
	scope := kairos.ScheduleScope{UserID: s.UserID, ChatID: s.ChatID}
	if prev, err := c.sched.store.OwnSchedule(ctx, ref, scope); err == nil {
		return "Already snoozed until " + schedtool.Label(prev.NextRun, prev.TZ) + ".", true, nil
	}
	one := &kairos.Schedule{Ref: ref, UserID: s.UserID, ChatID: s.ChatID, ThreadKey: s.ThreadKey, Kind: kairos.ScheduleReminder,
		Text: snoozeText(s, now), TZ: s.TZ, NextRun: at, Tainted: s.Tainted, Start: at.In(loc).Format(schedules.WallLayout)}
	if err := c.sched.store.CreateSchedule(ctx, one, c.policy().Schedules.MaxPerUser); err != nil {
		if prev, perr := c.sched.store.OwnSchedule(ctx, ref, scope); perr == nil { // the other press won
			return "Already snoozed until " + schedtool.Label(prev.NextRun, prev.TZ) + ".", true, nil
		}
		return "", false, err
	}
	c.sched.wake()
	return "Snoozed until " + schedtool.Label(at, s.TZ) + ".", true, nil
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
