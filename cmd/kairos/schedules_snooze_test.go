package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// Snooze is a create, through the real Main: it is refused at the
// user's cap, a cancelled schedule cannot be snoozed back to life, and a
// double press on one message makes one snooze.
func TestSnoozeIsACreateThroughMain(t *testing.T) {
	e := newEnv(t)
	const user = 2002
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\nschedules:\n  max_per_user: 2\n", operatorID)), 0o600)
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0)
	mk := func(text string, at time.Time) *kairos.Schedule {
		return &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: thread, Kind: kairos.ScheduleReminder, Text: text, TZ: "UTC",
			NextRun: at, Start: at.UTC().Format("2006-01-02T15:04:05")}
	}
	now := time.Now()
	due := e.seedOne(t, mk("water the plants", now.Add(-time.Second)), false)
	e.seedOne(t, mk("later one", now.Add(48*time.Hour)), false)
	third := e.seedOne(t, mk("third one", now.Add(72*time.Hour)), false)
	e.start()
	waitSent(t, e.tg, user, "⏰ water the plants")
	var msgID int
	for _, s := range e.tg.SentTo(user) {
		if strings.Contains(s.LastText(), "water the plants") {
			msgID = s.MessageID
		}
	}
	snooze := "sc:snooze:" + due.Ref + ":10m"

	// At the cap (the fired one-off is done; two are active): refused.
	e.tg.PushCallback(user, user, msgID, snooze)
	waitAnswer(t, e.tg, "the most allowed")

	// A cancelled schedule stays cancelled.
	e.tg.PushCallback(user, user, 0, "sc:cancel:"+third.Ref)
	waitAnswer(t, e.tg, "Cancelled.")
	e.tg.PushCallback(user, user, 0, "sc:snooze:"+third.Ref+":1h")
	waitAnswer(t, e.tg, "It was cancelled")

	// Room for one now: a double press snoozes once.
	e.tg.PushCallback(user, user, msgID, snooze)
	e.tg.PushCallback(user, user, msgID, "sc:snooze:"+due.Ref+":1h")
	waitAnswer(t, e.tg, "Already snoozed until")
	waitAnswer(t, e.tg, "Snoozed until")
	out := e.runCLI(t, "schedule", "list", "--user", "2002")
	if strings.Count(out, "water the plants") != 1 || strings.Contains(out, "third one") || strings.Count(out, `"kind"`) != 2 {
		t.Fatalf("after the presses: %s", out)
	}
}
