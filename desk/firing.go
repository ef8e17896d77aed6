package desk

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/schedules"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// Firings composes what a scheduled firing says, the same for every door:
// a reminder, a task's answer (its turn run here, counted as background
// spend, marked when it came from untrusted content), a watching cell's
// notification (with a warning when the cell was set up after untrusted
// content), the late note, the missed report and the buttons. The door
// only delivers the value, in its chat's turn order for a task.
type Firings struct {
	// Task answers a task's prompt as a turn of its thread (the task
	// agent: its tools follow schedules.tasks_may_use_tools).
	Task Handler
	// RunCell runs a watching cell and returns its notification, if any.
	RunCell func(ctx context.Context, s *kairos.Schedule, f *kairos.Firing) (string, error)
	Now     func() time.Time
}

// Address is where a firing goes: the door fills in its channel, chat and
// user; Compose fills in the rest of a task's turn.
type Address = kairos.Inbound

// Notes a firing may carry.
const (
	TaintedCellWarning = "⚠️ Untrusted content (from a watching cell set up after I read untrusted content; do not act on it without checking):\n"
	TaintedTaskWarning = "⚠️ This answer read untrusted content (the task was set up while untrusted content was in the conversation); check it before acting on it.\n\n"
)

// Compose returns what firing d says at addr; nil when it says nothing (a
// watching cell with nothing to notify). A task's turn runs inside
// Compose, so a door calls it in the chat's turn order.
func (fs *Firings) Compose(ctx context.Context, d schedules.Delivery, addr Address) (*kairos.Outgoing, error) {
	s, f := d.Schedule, d.Firing
	due := schedtool.Label(f.DueAt, s.TZ)
	if d.Missed {
		return &kairos.Outgoing{Text: fmt.Sprintf("Missed %s (due %s, %s ago, while I was down): %s",
			kairos.KindLabel(s.Kind), due, RoundLate(d.Late), schedtool.ViewOf(s).Text)}, nil
	}
	late := lateNote(d, due)
	switch s.Kind {
	case kairos.ScheduleTask:
		answer, err := fs.runTask(ctx, s, addr)
		if err != nil {
			return nil, err
		}
		warn := ""
		if s.Tainted {
			warn = TaintedTaskWarning
		}
		return &kairos.Outgoing{Text: "Scheduled task (" + due + "):\n\n" + warn + answer + late, Tainted: s.Tainted}, nil
	case kairos.ScheduleCell:
		note, err := fs.RunCell(ctx, s, f)
		if err != nil || note == "" {
			return nil, err
		}
		if s.Tainted { // what it says may come from the untrusted content
			note = TaintedCellWarning + note
		}
		return &kairos.Outgoing{Text: "🔔 " + note + late, Buttons: Buttons(s), Tainted: s.Tainted}, nil
	}
	return &kairos.Outgoing{Text: "⏰ " + s.Text + late, Buttons: Buttons(s)}, nil
}

func lateNote(d schedules.Delivery, due string) string {
	late := ""
	if d.Late >= schedules.LateNote {
		late = fmt.Sprintf("\n\n(Late by %s: I was not running at %s.)", RoundLate(d.Late), due)
	}
	if d.Firing.Skipped > 0 {
		late += fmt.Sprintf(" (%d earlier occurrence(s) passed while I was down.)", d.Firing.Skipped)
	}
	return late
}

// RoundLate says how late, to the minute past an hour, else the second.
func RoundLate(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// taskReplier keeps a task's answer; nobody is there to approve, so
// every approval is denied.
type taskReplier struct{ text string }

func (r *taskReplier) Typing(context.Context)                  {}
func (r *taskReplier) Partial(context.Context, string)         {}
func (r *taskReplier) Final(_ context.Context, s string) error { r.text = s; return nil }
func (r *taskReplier) Approve(context.Context, *kairos.ApprovalRequest) (kairos.Decision, error) {
	return kairos.Decision{Outcome: kairos.DecisionDenied}, nil
}

// runTask runs a task's prompt as a turn of its thread, counted against
// its owner as background work (at a cap, or past the background share,
// the answer is the cap's sentence).
func (fs *Firings) runTask(ctx context.Context, s *kairos.Schedule, addr Address) (string, error) {
	in := addr
	in.Text = "(Scheduled task the user set earlier; answer it now.) " + s.Task
	in.Date, in.Addressed, in.Origin, in.Turn = fs.Now(), true, kairos.OriginFiring, kairos.TurnTask
	if s.Tainted {
		in.Untrusted = "a scheduled task created while untrusted content was in the turn"
	}
	out := &taskReplier{}
	if err := fs.Task.HandleMessage(kairos.WithSpend(ctx, kairos.SpendContext{Kind: kairos.SpendTask}), &in, out); err != nil {
		return "", err
	}
	if strings.TrimSpace(out.text) == "" {
		return "", kairos.Errorf(kairos.EINTERNAL, "scheduled task %d gave no answer", s.ID)
	}
	return out.text, nil
}

// ButtonPrefix starts the callback data of a firing's buttons.
const ButtonPrefix = "sc:"

// Buttons is a reminder's keyboard: Done, Snooze (10 min, 1 h, till
// tomorrow), and Skip next when it repeats.
func Buttons(s *kairos.Schedule) [][]kairos.Button {
	id := s.PublicID()
	p := ButtonPrefix
	rows := [][]kairos.Button{
		{{Text: "Done", Data: p + "done:" + id}},
		{{Text: "Snooze", Data: p + "snooze:" + id + ":10m"}, {Text: "Snooze 1 h", Data: p + "snooze:" + id + ":1h"},
			{Text: "Snooze till tomorrow", Data: p + "snooze:" + id + ":1d"}},
	}
	if s.RRule != "" && s.Status == kairos.ScheduleActive {
		rows[0] = append(rows[0], kairos.Button{Text: "Skip next", Data: p + "skip:" + id})
	}
	return rows
}
