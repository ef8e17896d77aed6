package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/jobs"
	"github.com/kairos-agent/kairos/store"
)

// dueSchedule is a schedule of chat (a DM) due at at.
func dueSchedule(chat int64, kind, text string, at time.Time) *kairos.Schedule {
	s := &kairos.Schedule{UserID: chat, ChatID: chat, ThreadKey: kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, chat, chat, 0),
		Kind: kind, TZ: "UTC", NextRun: at, Start: at.UTC().Format("2006-01-02T15:04:05")}
	if kind == kairos.ScheduleTask {
		s.Task = text
	} else {
		s.Text = text
	}
	return s
}

// waitQueuedOrCalled waits until the chat's queue holds one turn (the
// task waits its turn) or the model got a second call (it ran beside the
// held turn); it reports the latter.
func waitQueuedOrCalled(t *testing.T, addr string, calls func() int) (ranBeside bool) {
	t.Helper()
	ctx := testCtx(t)
	for calls() < 2 && queueDepth(t, addr) != "1" {
		if ctx.Err() != nil {
			t.Fatal("the scheduled task neither queued nor reached the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return calls() >= 2
}

// A scheduled task that comes due while the user's Telegram turn holds
// the model is a turn of that chat like any other: it waits in the
// chat's queue (it used to run beside the turn, both writing the
// thread's history at once) and its request then holds that turn's
// answer.
func TestScheduledTaskWaitsForTheChatsTurn(t *testing.T) {
	e := newEnv(t)
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	const user = 2002
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) // two hours later is the same day: no session rollover
	clk := &testClock{t: t0}
	e.seedSchedules(t, dueSchedule(user, kairos.ScheduleTask, "summarise my day", t0.Add(time.Hour)))
	addr := e.startAt(clk)

	e.tg.PushText(user, user, "from telegram", clk.Now())
	select {
	case <-h.held:
	case <-testCtx(t).Done():
		t.Fatal("the Telegram turn never reached the model")
	}
	clk.Set(t0.Add(time.Hour + time.Second))
	calls := func() int { return len(e.llm.Requests()) }
	if waitQueuedOrCalled(t, addr, calls) || h.ranBeside() {
		t.Fatal("the scheduled task called the model while the chat's Telegram turn held it")
	}
	h.let()
	waitSent(t, e.tg, user, "FIRST-ANSWER")
	if n := waitSent(t, e.tg, user, "Scheduled task"); n != 1 {
		t.Fatalf("the task's answer arrived %d times", n)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 || h.ranBeside() {
		var asked []string
		for _, r := range reqs {
			asked = append(asked, r.LastUserMessage())
		}
		t.Fatalf("%d model calls (%q), overlapping %v", len(reqs), asked, h.ranBeside())
	}
	task := reqs[1]
	if !strings.Contains(task.LastUserMessage(), "summarise my day") {
		t.Fatalf("the second call was for %q", task.LastUserMessage())
	}
	if !sawFirstAnswer(task) {
		t.Fatalf("the task did not see the Telegram turn's answer: %+v", task.Messages)
	}
}

// A task stuck behind a held turn in one chat does not hold back another
// chat's reminder: firings of different chats are delivered side by
// side (the runner delivered them one at a time, so every user's
// reminders waited for the one chat's turn).
func TestTaskWaitingForItsChatDoesNotDelayOtherChats(t *testing.T) {
	e := newEnv(t)
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	const userA, userB = 2002, 3003
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) // two hours later is the same day: no session rollover
	clk := &testClock{t: t0}
	e.seedSchedules(t, dueSchedule(userA, kairos.ScheduleTask, "summarise my day", t0.Add(time.Hour)),
		dueSchedule(userB, kairos.ScheduleReminder, "water the plants", t0.Add(2*time.Hour)))
	addr := e.startAt(clk)

	e.tg.PushText(userA, userA, "from telegram", clk.Now())
	select {
	case <-h.held:
	case <-testCtx(t).Done():
		t.Fatal("the Telegram turn never reached the model")
	}
	clk.Set(t0.Add(time.Hour + time.Second)) // A's task is due: it waits for A's turn
	calls := func() int { return len(e.llm.Requests()) }
	waitQueuedOrCalled(t, addr, calls)
	clk.Set(t0.Add(2*time.Hour + time.Second)) // B's reminder is due
	waitSent(t, e.tg, userB, "⏰ water the plants")
	if got := calls(); got != 1 {
		t.Fatalf("%d model calls while chat A's turn held the model", got)
	}
	h.let()
	if n := waitSent(t, e.tg, userA, "Scheduled task"); n != 1 {
		t.Fatalf("the task's answer arrived %d times", n)
	}
}

// The background jobs keep the core's clock: with time injected, the
// automatic division compares a session's messages with the injected
// day, not the wall clock's (it ran on the wall clock, so a test on a
// past date saw its session divided, and a summary call, once the jobs'
// next minute came).
func TestJobsRunOnTheInjectedClock(t *testing.T) {
	e := newEnv(t)
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	e.startAt(&testClock{t: t0})
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs []*kairos.JobRun
	waitFor(t, "the division job's first run", func() bool {
		runs, err = store.NewJobStore(db).JobRuns(context.Background(), jobs.JobDivide, 1)
		return err == nil && len(runs) == 1
	})
	if !runs[0].StartedAt.Equal(t0) {
		t.Fatalf("the division ran at %v, want the injected %v", runs[0].StartedAt, t0)
	}
}
