package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// waitOut polls (with the test's deadline) until buf holds want.
func waitOut(t *testing.T, buf *syncBuffer, want string) {
	t.Helper()
	ctx := testCtx(t)
	for !strings.Contains(buf.String(), want) {
		if ctx.Err() != nil {
			t.Fatalf("output never held %q:\n%s", want, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func chatEnv(t *testing.T) *env {
	e := newEnv(t)
	delete(e.vars, "TELEGRAM_BOT_TOKEN")
	return e
}

// TestChatAnswersHelpStartAndCommands: /help and /start list the
// commands in a stable order, an unknown one says how to get the list.
func TestChatAnswersHelpStartAndCommands(t *testing.T) {
	e := chatEnv(t)
	m := e.main()
	m.Stdin = strings.NewReader("/help\n/start\n/frob\n")
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	out := e.out.String()
	if strings.Count(out, "/help: this list") != 2 || !strings.Contains(out, "I don't know the command /frob. Send /help") {
		t.Fatalf("stdout:\n%s", out)
	}
	first := out[:strings.Index(out, "Say ")]
	i, j, k := strings.Index(first, "/clock:"), strings.Index(first, "/codestats:"), strings.Index(first, "/reminders:")
	if i < 0 || j < 0 || k < 0 || !(i < j && j < k) {
		t.Fatalf("commands not listed in order:\n%s", first)
	}
	if strings.Contains(out, "**") || strings.Contains(out, "`") {
		t.Fatalf("Markdown left in the terminal:\n%s", out)
	}
}

// TestChatPlainTextQuietLogsAndLongLines: Markdown is stripped, info logs
// are hidden without -v, and a line longer than the scanner's old 1 MiB
// buffer is answered, not silently dropped.
func TestChatPlainTextQuietLogsAndLongLines(t *testing.T) {
	e := chatEnv(t)
	e.llm.Enqueue(testkit.TextReply("## Plan\n**Bold** and `code`, see [the docs](https://docs.example/x)."))
	m := e.main()
	m.Stdin = strings.NewReader("hello\n" + strings.Repeat("x", 2<<20) + "\nafter the long line\n")
	e.llm.Enqueue(testkit.TextReply("still here"))
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	out := e.out.String()
	for _, want := range []string{"Plan\nBold and code, see the docs (https://docs.example/x).", "That message is too long", "still here"} {
		if !strings.Contains(out, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(e.logs.String(), "level=INFO") {
		t.Fatalf("info logs shown without -v:\n%s", e.logs.String())
	}
	v := chatEnv(t)
	v.llm.Enqueue(testkit.TextReply("hi"))
	mv := v.main()
	mv.Stdin = strings.NewReader("hello\n")
	if code := mv.Main(context.Background(), []string{"chat", "-v"}); code != 0 || !strings.Contains(v.logs.String(), "level=INFO msg=turn") {
		t.Fatalf("-v: exit %d, logs:\n%s", code, v.logs.String())
	}
}

// stretchReminderModel sets a reminder "stretch" in 10 minutes when asked
// to remind, and says what the tool answered.
func stretchReminderModel(r testkit.ChatRequest) testkit.Reply {
	last := r.Messages[len(r.Messages)-1]
	switch {
	case last.Role == "user" && strings.Contains(last.Content, "remind me"):
		return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","when":"in 10 minutes","text":"stretch"}`})
	case last.Role == "tool":
		return testkit.TextReply("Tool said: " + last.Content)
	}
	return testkit.TextReply("ok")
}

// TestChatReminderIsApprovedAndArrives: the schedule tool works in chat
// (it failed with "schedules need a known user"): approval asked as y/N,
// and the reminder is printed in the terminal at its time.
func TestChatReminderIsApprovedAndArrives(t *testing.T) {
	e := chatEnv(t)
	e.llm.SetHandler(stretchReminderModel)
	clk := &testClock{t: time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)}
	pr, pw := io.Pipe()
	m := e.main()
	m.Stdin, m.Now = pr, clk.Now
	done := make(chan int, 1)
	go func() { done <- m.Main(context.Background(), []string{"chat"}) }()
	io.WriteString(pw, "/clock tz Europe/Lisbon\n")
	waitOut(t, e.out, "Europe/Lisbon")
	io.WriteString(pw, "please remind me to stretch in 10 minutes\n")
	waitOut(t, e.out, "Approve? [y")
	io.WriteString(pw, "y\n")
	waitOut(t, e.out, `"success":true`)
	clk.Set(clk.Now().Add(11 * time.Minute))
	waitOut(t, e.out, "⏰ stretch")
	pw.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	if strings.Contains(e.out.String(), "known user") {
		t.Fatalf("schedule refused:\n%s", e.out.String())
	}
}
