package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// TestNewSessionMidTurnKeepsTheTurn: when the memory tool's
// __NEW_SESSION__ ends the session in the middle of a turn, that turn's
// messages are stored in the session it happened in, the session's
// summary is written from them, and the next message opens the next
// session.
func TestNewSessionMidTurnKeepsTheTurn(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		sys := r.Messages[0].Content
		switch {
		case strings.Contains(sys, "Summarize this conversation"):
			return testkit.TextReply("They talked about the wedding seating plan.")
		case last.Role == "user" && strings.Contains(last.Content, "start fresh"):
			return testkit.ToolReply(testkit.ToolCall{ID: "n1", Name: "memory", Arguments: `{"action":"store","layer":"session","content":"__NEW_SESSION__","category":"system"}`})
		case last.Role == "tool":
			return testkit.TextReply("Fresh start after this.")
		}
		return testkit.TextReply("ok: " + last.Content)
	})
	e.start()
	e.tg.PushText(2002, 2002, "the wedding seating plan is done", time.Now())
	waitReply(t, e.tg, 2002, 1, "ok:")
	e.tg.PushText(2002, 2002, "thanks, let's start fresh", time.Now())
	waitReply(t, e.tg, 2002, 2, "Fresh start")
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, "the session to end", func() bool { return count(t, db, "sessions", "ended_at IS NOT NULL") == 1 })
	var ended struct {
		ID      string
		Summary string
	}
	if err := db.Gorm().Raw(`SELECT id, summary FROM sessions WHERE ended_at IS NOT NULL`).Scan(&ended).Error; err != nil {
		t.Fatal(err)
	}
	// The ending turn (its user message, the tool call, the answer) is in
	// the ended session, and its summary was written after it.
	if n := count(t, db, "messages", "session_id = ? AND content LIKE ?", ended.ID, "%start fresh%"); n != 1 {
		t.Fatalf("the ending turn's user message is in the ended session %d times", n)
	}
	if n := count(t, db, "messages", "session_id = ? AND content = ?", ended.ID, "Fresh start after this."); n != 1 {
		t.Fatalf("the ending turn's answer is in the ended session %d times", n)
	}
	if !strings.Contains(ended.Summary, "wedding") {
		t.Fatalf("summary %q", ended.Summary)
	}
	summarised := false
	for _, r := range e.llm.Requests() {
		if strings.Contains(r.Messages[0].Content, "Summarize this conversation") && strings.Contains(r.LastUserMessage(), "start fresh") {
			summarised = true
		}
	}
	if !summarised {
		t.Fatal("the summary was written without the turn that ended the session")
	}
	// The next message opens the next session.
	e.tg.PushText(2002, 2002, "hello again", time.Now())
	waitReply(t, e.tg, 2002, 3, "ok: hello again")
	if n := count(t, db, "messages", "session_id <> ? AND content = ?", ended.ID, "hello again"); n != 1 {
		t.Fatalf("the next message is not in a new session (%d)", n)
	}
}
