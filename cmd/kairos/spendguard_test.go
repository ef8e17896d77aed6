package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// At the cap, neither messages nor /newsession reach the model: the
// session summaries of /newsession are refused like every other call
// (they were counted but never refused: 3 summary calls past a 100-token
// daily cap, each summarizing the refused turns that piled up), and a
// refused turn is not kept as history to be summarized later.
func TestCapRefusesSummaryCallsOfNewSession(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_tokens: 100}\n")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if len(r.Tools) == 0 && strings.Contains(r.SystemPrompt(), "Summarize this conversation") {
			n := 0
			for _, m := range r.Messages {
				n += len(m.Content) / 4
			}
			return testkit.Reply{Text: "SUMMARY", Usage: &testkit.Usage{PromptTokens: n, CompletionTokens: 50}}
		}
		return testkit.Reply{Text: "ok " + r.LastUserMessage(), Usage: &testkit.Usage{PromptTokens: 40, CompletionTokens: 5}}
	})
	e.start()
	const user = 2002
	for _, text := range []string{"one", "two", "three"} { // 135 tokens: the cap is reached
		e.tg.PushText(user, user, text, time.Now())
		waitCount(t, e.tg, user, "ok "+text, 1)
	}
	atCap := len(e.llm.Requests())
	long := "tell me everything " + strings.Repeat("about the weather in every town of the world ", 85)
	refused := 0
	for i := 1; i <= 3; i++ {
		for range 4 { // a Telegram message holds 4,096 characters: four of them
			e.tg.PushText(user, user, long, time.Now())
			refused++
			waitCount(t, e.tg, user, "You have reached your daily token limit of 100 tokens", refused)
		}
		e.tg.PushText(user, user, "/newsession", time.Now())
		waitCount(t, e.tg, user, "Started a new session", i)
	}
	past, tokens := 0, 0
	for _, r := range e.llm.Requests()[atCap:] {
		past++
		for _, m := range r.Messages {
			tokens += len(m.Content) / 4
		}
	}
	if past != 0 {
		t.Fatalf("%d model calls (about %d tokens) past a 100-token daily cap, want 0", past, tokens)
	}
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := count(t, db, "messages", "content LIKE ?", "tell me everything%"); n != 0 {
		t.Fatalf("%d refused turns kept as history", n)
	}
	_ = os.Remove // keep imports stable while the file grows
}
