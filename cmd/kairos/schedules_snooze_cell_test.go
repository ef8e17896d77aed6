package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// Snoozing a watching cell's notification makes a reminder with a
// neutral label, never the cell's code.
func TestSnoozeCellNotificationIsNotItsCode(t *testing.T) {
	e := newEnv(t)
	const user = 2002
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0)
	now := time.Now()
	cell := e.seedOne(t, &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: thread, Kind: kairos.ScheduleCell,
		Code: "const apiKeyish = 'first line of code';\noutput({notify: 'price dropped'});", TZ: "UTC",
		NextRun: now.Add(-time.Second), Start: now.UTC().Format("2006-01-02T15:04:05")}, false)
	e.start()
	waitSent(t, e.tg, user, "🔔 price dropped")
	var msgID int
	for _, s := range e.tg.SentTo(user) {
		if strings.Contains(s.LastText(), "price dropped") {
			msgID = s.MessageID
		}
	}
	e.tg.PushCallback(user, user, msgID, "sc:snooze:"+cell.Ref+":10m")
	waitAnswer(t, e.tg, "Snoozed until")
	out := e.runCLI(t, "schedule", "list", "--user", "2002")
	if strings.Contains(out, "apiKeyish") || !strings.Contains(out, "Watching cell") || !strings.Contains(out, `"reminder"`) {
		t.Fatalf("the snoozed copy: %s", out)
	}
}

// A watching cell missed while Kairos was down is reported by what it
// watches (or a neutral label for one stored without a title), never by
// its first line of code; so is /reminders' list.
func TestMissedCellIsNotItsCode(t *testing.T) {
	e := newEnv(t)
	const user = 2002
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0)
	old := time.Now().Add(-48 * time.Hour)
	cell := func(title, code string) *kairos.Schedule {
		return &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: thread, Kind: kairos.ScheduleCell, Text: title,
			Code: code + "\noutput({notify: 'x'});", TZ: "UTC", NextRun: old, RRule: "FREQ=WEEKLY", Repeat: "every week", Start: old.UTC().Format("2006-01-02T15:04:05")}
	}
	e.seedSchedules(t, cell("BTC below 90k", "const titledCode = 1;"), cell("", "const untitledCode = 1;"))
	e.start()
	waitSent(t, e.tg, user, "Missed watching cell (due")
	waitSent(t, e.tg, user, "BTC below 90k")
	waitSent(t, e.tg, user, "with no description")
	e.tg.PushText(user, user, "/reminders", time.Now())
	waitSent(t, e.tg, user, "Your schedules")
	for _, s := range e.tg.SentTo(user) {
		if txt := s.LastText(); strings.Contains(txt, "Code = 1") {
			t.Fatalf("code shown to the user: %q", txt)
		}
	}
}
