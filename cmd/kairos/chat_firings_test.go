package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// TestTerminalFiringLeftPendingArrivesAtNextChat: a terminal reminder's
// firing claimed by a `kairos chat` that ended before sending it (it
// delivered only what it had claimed itself) is delivered by the next
// chat, and `kairos run`'s view of the store never leases it (it once
// did, and failed it: a terminal thread cannot get a Telegram message),
// while it still leases the Telegram one.
func TestTerminalFiringLeftPendingArrivesAtNextChat(t *testing.T) {
	e := chatEnv(t)
	ctx := context.Background()
	due := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	uid := cliUserID()
	mk := func(thread, text string) *kairos.Schedule {
		return &kairos.Schedule{UserID: uid, ThreadKey: thread, Kind: kairos.ScheduleReminder, Text: text, TZ: "UTC",
			Start: due.Format("2006-01-02T15:04:05"), NextRun: due}
	}
	term := mk(kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, uid, uid, 0), "water the plants")
	tg := mk(kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, 4242, 4242, 0), "call mum")
	e.seedSchedules(t, term, tg)
	st := store.NewScheduleStore(chatDB(t, e))
	for _, s := range []*kairos.Schedule{term, tg} { // claimed by processes that ended before sending
		if f, err := st.ClaimFiring(ctx, s, kairos.Advance{Status: kairos.ScheduleDone}, due); err != nil || f == nil {
			t.Fatalf("claim %v %v", f, err)
		}
	}
	bot := botSchedules(st)
	fs, err := bot.LeaseFirings(ctx, due.Add(time.Minute), time.Minute, 10)
	if err != nil || len(fs) != 1 || fs[0].ScheduleID != tg.ID {
		t.Fatalf("kairos run leased %v (%v), want only the Telegram firing", fs, err)
	}

	clk := &testClock{t: due.Add(2 * time.Minute)}
	pr, pw := io.Pipe()
	m := e.main()
	m.Stdin, m.Now = pr, clk.Now
	done := make(chan int, 1)
	go func() { done <- m.Main(ctx, []string{"chat"}) }()
	waitOut(t, e.out, "water the plants")
	pw.Close()
	if code := waitExit(t, done); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	got, err := st.Firings(ctx, term.ID)
	if err != nil || len(got) != 1 || got[0].Status != kairos.FiringSent {
		t.Fatalf("the terminal firing after the chat: %+v %v", got, err)
	}
}

// TestTerminalTaskWaitsForTheTurn: in `kairos chat` a scheduled task that
// comes due while the user's own turn holds the model waits for that turn
// (it ran beside it, both writing the thread's history at once) and then
// sees its answer, as a Telegram chat's task does.
func TestTerminalTaskWaitsForTheTurn(t *testing.T) {
	e := chatEnv(t)
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) // an hour later is the same day: no session rollover
	uid := cliUserID()
	task := dueSchedule(uid, kairos.ScheduleTask, "summarise my day", t0.Add(time.Hour))
	task.ChatID, task.ThreadKey = uid, kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, uid, uid, 0)
	e.seedSchedules(t, task)
	clk := &testClock{t: t0}
	pr, pw := io.Pipe()
	m := e.main()
	m.Stdin, m.Now = pr, clk.Now
	done := make(chan int, 1)
	go func() { done <- m.Main(context.Background(), []string{"chat", "-v"}) }()
	io.WriteString(pw, "from the terminal\n")
	select {
	case <-h.held:
	case <-testCtx(t).Done():
		t.Fatal("the terminal's turn never reached the model")
	}
	clk.Set(t0.Add(time.Hour + time.Second))
	for deadline := testkit.GiveUpAt(t); !strings.Contains(e.logs.String(), "waits for the terminal's turn"); {
		if len(e.llm.Requests()) > 1 || h.ranBeside() {
			t.Fatal("the scheduled task called the model while the terminal's turn held it")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task neither waited nor ran:\n%s", e.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.let()
	waitOut(t, e.out, "Scheduled task")
	pw.Close()
	if code := waitExit(t, done); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 || h.ranBeside() || !strings.Contains(reqs[1].LastUserMessage(), "summarise my day") || !sawFirstAnswer(reqs[1]) {
		t.Fatalf("%d model calls, overlapping %v; the task's request: %+v", len(reqs), h.ranBeside(), reqs[len(reqs)-1].Messages)
	}
}
