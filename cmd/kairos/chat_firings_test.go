package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
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
	db, err := store.Open(ctx, store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewScheduleStore(db)
	due := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	uid := cliUserID()
	mk := func(thread, text string) *kairos.Schedule {
		s := &kairos.Schedule{UserID: uid, ThreadKey: thread, Kind: kairos.ScheduleReminder, Text: text, TZ: "UTC",
			Start: due.Format("2006-01-02T15:04:05"), NextRun: due}
		if err := st.CreateSchedule(ctx, s, 0); err != nil {
			t.Fatal(err)
		}
		if f, err := st.ClaimFiring(ctx, s, kairos.Advance{Status: kairos.ScheduleDone}, due); err != nil || f == nil {
			t.Fatalf("claim %v %v", f, err)
		}
		return s
	}
	term := mk(kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, uid, uid, 0), "water the plants")
	tg := mk(kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, 4242, 4242, 0), "call mum")
	bot := botSchedules{renewingStore{st}, st}
	fs, err := bot.LeaseFirings(ctx, due.Add(time.Minute), time.Minute, 10)
	if err != nil || len(fs) != 1 || fs[0].ScheduleID != tg.ID {
		t.Fatalf("kairos run leased %v (%v), want only the Telegram firing", fs, err)
	}
	db.Close()

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
	got, err := store.NewScheduleStore(chatDB(t, e)).Firings(ctx, term.ID)
	if err != nil || len(got) != 1 || got[0].Status != kairos.FiringSent {
		t.Fatalf("the terminal firing after the chat: %+v %v", got, err)
	}
}
