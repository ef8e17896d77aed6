package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestLogsOneLinePerEvent: a turn is one line (user id, thread, model,
// tokens, ms); a stranger's refusal and an approval decision are a line
// each; a failed model call is one line per attempt (not one from the
// adapter and one from the agent); migrations are one line.
func TestLogsOneLinePerEvent(t *testing.T) {
	e := newEnv(t)
	const user = 2002
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "remind me"):
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","when":"in 2 hours","text":"stretch"}`})
		case last.Role == "user" && strings.Contains(last.Content, "fail"):
			return testkit.ErrorReply(400, "bad request")
		}
		return testkit.TextReply("done")
	})
	e.start()
	e.tg.PushText(user, user, "/clock tz Europe/Lisbon", time.Now())
	waitSent(t, e.tg, user, "Europe/Lisbon")
	e.tg.PushText(user, user, "please remind me to stretch in 2 hours", time.Now())
	waitSent(t, e.tg, user, "Approval needed")
	if _, err := e.tg.PressButton(user, user, "Approve"); err != nil {
		t.Fatal(err)
	}
	waitSent(t, e.tg, user, "done")
	e.tg.PushText(user, user, "now fail please", time.Now())
	waitSent(t, e.tg, user, "Sorry")
	e.tg.PushText(5555, 5555, "who are you", time.Now())
	e.tg.MustWaitSentTo(5555, 1)

	logs := e.logs.String()
	turn := regexp.MustCompile(`level=INFO msg=turn component=agent user_id=2002 thread=agent:main:telegram:dm:2002 model=test-model tokens=[1-9][0-9]* tool_calls=1 ms=[0-9]+ outcome=answered`)
	if !turn.MatchString(logs) {
		t.Errorf("no turn line:\n%s", logs)
	}
	if !regexp.MustCompile(`level=WARN msg=turn .*user_id=2002 .*outcome=failed .*code=unavailable`).MatchString(logs) {
		t.Errorf("no failed turn line:\n%s", logs)
	}
	if !regexp.MustCompile(`msg="approval decided" .*user_id=2002 .*action=schedule.create outcome=approved`).MatchString(logs) {
		t.Errorf("no approval line:\n%s", logs)
	}
	if !regexp.MustCompile(`msg="stranger refused" .*user_id=5555`).MatchString(logs) {
		t.Errorf("no refusal line:\n%s", logs)
	}
	if n := strings.Count(logs, "HTTP 400: bad request"); n != 2 { // the attempt and the turn
		t.Errorf("the model failure logged %d times, want 2 (attempt, turn):\n%s", n, logs)
	}
	if n := strings.Count(logs, "migration"); n != 1 {
		t.Errorf("%d migration lines, want 1:\n%s", n, logs)
	}
}
