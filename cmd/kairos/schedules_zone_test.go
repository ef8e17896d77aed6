package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// Floating time through the real Main (CLOCK.md §4.2-4.3): a user whose
// zone is unknown asks for "tomorrow at 9"; Kairos asks where they are
// instead of setting 09:00 UTC, nothing is created or put up for
// approval, and their answer becomes their zone: the reminder is set for
// 09:00 there and /clock shows the zone.
func TestFloatingTimeAsksForTheZoneThroughMain(t *testing.T) {
	e := newEnv(t)
	const user = 2002
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && (strings.Contains(last.Content, "remind me") || strings.Contains(last.Content, "Lisbon")):
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","when":"tomorrow at 9am","text":"call mom"}`})
		case last.Role == "tool":
			var res struct {
				Question string `json:"clarification_question"`
			}
			if json.Unmarshal([]byte(last.Content), &res) == nil && res.Question != "" {
				return testkit.TextReply(res.Question)
			}
			return testkit.TextReply("Tool said: " + last.Content)
		}
		return testkit.TextReply("ok")
	})
	clk := &testClock{t: time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)}
	e.startAt(clk)
	e.tg.PushText(user, user, "please remind me to call mom tomorrow at 9", clk.Now())
	waitSent(t, e.tg, user, "Where are you?")
	for _, s := range e.tg.SentTo(user) {
		if strings.Contains(s.LastText(), "Approval") || strings.Contains(s.LastText(), "09:00 UTC") {
			t.Fatalf("a UTC guess went ahead: %q", s.LastText())
		}
	}
	if out := e.runCLI(t, "schedule", "list"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("created before the zone was known: %s", out)
	}

	e.tg.PushText(user, user, "I'm in Lisbon", clk.Now())
	waitSent(t, e.tg, user, "Wed 25 Nov 09:00 Europe/Lisbon")
	if _, err := e.tg.PressButton(user, user, "Approve"); err != nil {
		t.Fatal(err)
	}
	waitSent(t, e.tg, user, `"success":true`)
	out := e.runCLI(t, "schedule", "list")
	if !strings.Contains(out, `"tz": "Europe/Lisbon"`) || !strings.Contains(out, "2026-11-25T09:00:00Z") {
		t.Fatalf("schedule list: %s", out)
	}
	n := len(e.tg.SentTo(user))
	e.tg.PushText(user, user, "/clock", clk.Now())
	waitReply(t, e.tg, user, n+1, "Europe/Lisbon")
}
