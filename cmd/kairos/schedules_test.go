package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// startAt runs `kairos run` with the core's clock injected.
func (e *env) startAt(clk *testClock) {
	e.t.Helper()
	m := e.main()
	m.Now = clk.Now
	addr := make(chan string, 1)
	m.Started = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- m.Main(ctx, []string{"run"}) }()
	e.t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			e.t.Error("kairos run did not stop")
		}
	})
	select {
	case <-addr:
	case code := <-done:
		e.t.Fatalf("kairos run exited early with %d:\n%s", code, e.logs.String())
	case <-time.After(60 * time.Second):
		e.t.Fatalf("kairos run did not start:\n%s", e.logs.String())
	}
}

// waitSent waits (with a deadline) for a message to chat containing want
// and returns how many messages to chat contain it.
func waitSent(t *testing.T, tg *testkit.FakeTelegram, chat int64, want string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := 0
		var all []string
		for _, s := range tg.SentTo(chat) {
			all = append(all, s.LastText())
			if strings.Contains(s.LastText(), want) {
				n++
			}
		}
		if n > 0 {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat %d never got %q; messages: %q", chat, want, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The whole lifecycle through the real Main: the model creates a
// reminder for "tomorrow at 9" anchored to the user's zone, the user
// approves the resolved time, the reminder fires at 09:00 Lisbon time
// (injected clock) once with Done/Snooze, Snooze brings it back ten
// minutes later, and `kairos schedule list` shows what is pending.
func TestReminderLifecycleThroughMain(t *testing.T) {
	e := newEnv(t)
	const user = 2002
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "remind me"):
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","when":"tomorrow at 9am","text":"call the dentist"}`})
		case last.Role == "user" && strings.Contains(last.Content, "every weekday"):
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","repeat":"every weekday at 8am","text":"stand-up"}`})
		case last.Role == "tool":
			return testkit.TextReply("Tool said: " + last.Content)
		}
		return testkit.TextReply("ok")
	})
	lisbon, _ := time.LoadLocation("Europe/Lisbon")
	clk := &testClock{t: time.Date(2026, 11, 24, 18, 0, 0, 0, lisbon)}
	e.startAt(clk)
	e.tg.PushText(user, user, "/clock tz Europe/Lisbon", clk.Now())
	waitSent(t, e.tg, user, "Europe/Lisbon")

	e.tg.PushText(user, user, "please remind me to call the dentist tomorrow at 9", clk.Now())
	waitSent(t, e.tg, user, "Approval needed")
	approval := e.tg.SentTo(user)
	if txt := approval[len(approval)-1].LastText(); !strings.Contains(txt, "Wed 25 Nov 09:00 Europe/Lisbon") {
		t.Fatalf("approval does not state the resolved time: %q", txt)
	}
	if _, err := e.tg.PressButton(user, user, "Approve"); err != nil {
		t.Fatal(err)
	}
	waitSent(t, e.tg, user, `"success":true`)

	// Not yet due: nothing fires before 09:00.
	clk.Set(time.Date(2026, 11, 25, 8, 59, 0, 0, lisbon))
	out := e.runCLI(t, "schedule", "list", "--user", "2002")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("schedule list: %v %s", err, out)
	}
	if list[0]["next_run"] != "2026-11-25T09:00:00Z" || list[0]["tz"] != "Europe/Lisbon" || list[0]["kind"] != "reminder" {
		t.Fatalf("schedule list: %s", out)
	}
	clk.Set(time.Date(2026, 11, 25, 9, 0, 1, 0, lisbon))
	waitSent(t, e.tg, user, "⏰ call the dentist")
	if _, err := e.tg.PressButton(user, user, "Snooze"); err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, e.tg, "Snoozed until Wed 25 Nov 09:10 Europe/Lisbon")
	clk.Set(time.Date(2026, 11, 25, 9, 10, 2, 0, lisbon))
	deadline := time.Now().Add(20 * time.Second)
	for waitSent(t, e.tg, user, "⏰ call the dentist") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("snoozed reminder never came back: answers %+v", e.tg.CallbackAnswers())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitAnswer(t *testing.T, tg *testkit.FakeTelegram, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, a := range tg.CallbackAnswers() {
			if strings.Contains(a.Text, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no callback answer %q: %+v", want, tg.CallbackAnswers())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *syncBuffer) Reset() { s.mu.Lock(); s.b.Reset(); s.mu.Unlock() }

func (e *env) runCLI(t *testing.T, args ...string) string {
	t.Helper()
	e.out.Reset()
	if code := e.main().Main(context.Background(), args); code != 0 {
		t.Fatalf("kairos %v exited %d:\n%s", args, code, e.logs.String())
	}
	return e.out.String()
}
