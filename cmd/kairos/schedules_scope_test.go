package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// seedOne stores one schedule and returns it (with its public id); with
// legacy it is made a row stored before ids were random (no ref).
func (e *env) seedOne(t *testing.T, s *kairos.Schedule, legacy bool) *kairos.Schedule {
	t.Helper()
	e.seedSchedules(t, s)
	if legacy {
		ctx := context.Background()
		db, err := store.Open(ctx, store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.SQL().ExecContext(ctx, fmt.Sprintf("UPDATE schedules SET ref = NULL WHERE id = %d", s.ID)); err != nil {
			t.Fatal(err)
		}
		s.Ref = ""
	}
	return s
}

// Scope before reading, through the real Main: another user's schedule
// id (random, so it had to leak first) cannot be cancelled or snoozed,
// and neither the approval, the tool's answer nor a button's toast says
// what or when it is; an old numeric id still works for its owner; and
// /reminders in a group lists that group's schedules only.
func TestScheduleScopeThroughMain(t *testing.T) {
	e := newEnv(t)
	const owner, other, group = 2002, 3003, -100500
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002, 3003]\n", operatorID)), 0o600)
	at := time.Now().Add(48 * time.Hour).Truncate(time.Minute)
	mk := func(chat int64, kind, text string) *kairos.Schedule {
		return &kairos.Schedule{UserID: owner, ChatID: chat, ThreadKey: kairos.ThreadKey(kairos.ChannelTelegram, kind, chat, owner, 0),
			Kind: kairos.ScheduleReminder, Text: text, TZ: "UTC", NextRun: at, Start: at.UTC().Format("2006-01-02T15:04:05")}
	}
	secret := e.seedOne(t, mk(owner, kairos.ChatDM, "secret pharmacy pickup"), false)
	legacy := e.seedOne(t, mk(owner, kairos.ChatDM, "old numeric one"), true)
	e.seedOne(t, mk(group, kairos.ChatGroup, "group standup"), false)
	if len(secret.Ref) != 26 {
		t.Fatalf("public id %q is not 128 random bits", secret.Ref)
	}
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "user" && strings.Contains(last.Content, "cancel") {
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"cancel","schedule_id":"` + secret.Ref + `"}`})
		}
		return testkit.TextReply("Tool said: " + last.Content)
	})
	e.start()

	e.tg.PushText(other, other, "please cancel that reminder", time.Now())
	waitSent(t, e.tg, other, "Tool said:")
	e.tg.PushCallback(other, other, 0, "sc:snooze:"+secret.Ref+":10m")
	e.tg.PushCallback(other, other, 0, "sc:cancel:"+secret.Ref)
	waitAnswer(t, e.tg, "Only the person who set it")
	leak := []string{"pharmacy", at.UTC().Format("15:04")}
	for _, s := range e.tg.SentTo(other) {
		for _, w := range leak {
			if strings.Contains(s.LastText(), w) {
				t.Fatalf("user %d was shown %q: %q", other, w, s.LastText())
			}
		}
	}
	for _, a := range e.tg.CallbackAnswers() {
		if strings.Contains(a.Text, "pharmacy") {
			t.Fatalf("a toast showed the text: %q", a.Text)
		}
	}
	for _, r := range e.llm.Requests() {
		if strings.Contains(fmt.Sprint(r.Messages), "pharmacy") {
			t.Fatalf("the other user's model turn saw the text")
		}
	}

	e.tg.PushCallback(owner, owner, 0, fmt.Sprintf("sc:cancel:%d", legacy.ID))
	waitAnswer(t, e.tg, "Cancelled.")

	e.tg.PushText(group, owner, "/reminders", time.Now(), testkit.AsGroup("Team"))
	txt := waitSent(t, e.tg, group, "group standup")
	_ = txt
	for _, s := range e.tg.SentTo(group) {
		if strings.Contains(s.LastText(), "pharmacy") {
			t.Fatalf("/reminders in a group listed a DM schedule: %q", s.LastText())
		}
	}
	out := e.runCLI(t, "schedule", "list")
	if !strings.Contains(out, "pharmacy") || strings.Contains(out, "old numeric one") || strings.Count(out, `"kind"`) != 2 {
		t.Fatalf("schedules after the attempts: %s", out)
	}
}
