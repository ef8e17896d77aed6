package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/store"
)

// chatDB opens the chat env's database after the chat has ended.
func chatDB(t *testing.T, e *env) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// runChatIn starts `kairos chat` on a pipe; it returns the pipe's writer
// and the exit status's channel.
func runChatIn(ctx context.Context, e *env) (*io.PipeWriter, <-chan int) {
	pr, pw := io.Pipe()
	m := e.main()
	m.Stdin = pr
	done := make(chan int, 1)
	go func() { done <- m.Main(ctx, []string{"chat"}) }()
	e.t.Cleanup(func() { pw.Close() })
	return pw, done
}

func waitExit(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-testCtx(t).Done():
		t.Fatal("kairos chat did not end")
	}
	return -1
}

// TestChatEOFEndsCleanly: Ctrl-D (end of input) ends the chat with exit 0
// once the turn in progress has answered; the turn is whole in the
// database.
func TestChatEOFEndsCleanly(t *testing.T) {
	e := chatEnv(t)
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	pw, done := runChatIn(context.Background(), e)
	io.WriteString(pw, "remember the milk\n")
	select {
	case <-h.held:
	case <-testCtx(t).Done():
		t.Fatal("the turn never reached the model")
	}
	pw.Close() // Ctrl-D while the model is thinking
	h.let()
	if code := waitExit(t, done); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.logs.String())
	}
	if out := e.out.String(); !strings.Contains(out, "FIRST-ANSWER") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout:\n%q", out)
	}
	if strings.Contains(e.logs.String(), "level=ERROR") {
		t.Fatalf("errors logged:\n%s", e.logs.String())
	}
	db := chatDB(t, e)
	if n := count(t, db, "messages", ""); n != 2 {
		t.Fatalf("%d messages stored, want the user's and the answer", n)
	}
}

// TestChatInterruptMidTurnLeavesNothingHalfWritten: an interrupt (Ctrl-C,
// SIGINT: the context ends) while the model is thinking ends the chat
// with exit 0, no apology and no error, and the interrupted turn leaves
// no trace: no message, no clock mark, no usage; the next chat starts as
// if it had never been sent.
func TestChatInterruptMidTurnLeavesNothingHalfWritten(t *testing.T) {
	e := chatEnv(t)
	h := newHoldModel(t)
	e.llm.SetHandler(h.reply)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pw, done := runChatIn(ctx, e)
	io.WriteString(pw, "remember the milk\n")
	select {
	case <-h.held:
	case <-testCtx(t).Done():
		t.Fatal("the turn never reached the model")
	}
	cancel()
	if code := waitExit(t, done); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.logs.String())
	}
	h.let()
	if out := e.out.String(); strings.Contains(out, "Sorry") || strings.Contains(out, "FIRST-ANSWER") {
		t.Fatalf("stdout:\n%s", out)
	}
	if strings.Contains(e.logs.String(), "level=ERROR") {
		t.Fatalf("errors logged:\n%s", e.logs.String())
	}
	db := chatDB(t, e)
	for _, table := range []string{"messages", "token_usage", "clock_threads", "clock_thread_users", "thread_modes", "mode_transitions", "tool_calls"} {
		if n := count(t, db, table, ""); n != 0 {
			t.Errorf("%d rows in %s after the interrupted turn", n, table)
		}
	}
	// The next chat does not carry the interrupted line.
	m := e.main()
	m.Stdin = strings.NewReader("hello again\n")
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("the next chat: exit %d:\n%s", code, e.logs.String())
	}
	last := e.llm.LastRequest()
	if last.LastUserMessage() != "hello again" {
		t.Fatalf("the next chat's call was for %q", last.LastUserMessage())
	}
	for _, msg := range last.Messages {
		if strings.Contains(msg.Content, "remember the milk") {
			t.Fatalf("the interrupted line is in the next chat's history: %+v", last.Messages)
		}
	}
}
