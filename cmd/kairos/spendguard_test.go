package main

import (
	"context"
	"encoding/json"
	"fmt"
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
}

// Audio is priced by the length read from the file (whisper-1: $0.006 a
// minute) under a $0.006 daily cap: a voice note that declares 1 s but
// holds 30 minutes, and 30 minutes sent as a document (no length
// declared), are refused before any transcription (they were transcribed
// and recorded as 1 s and as 0 s / $0); a 20-second note that declares
// 60 s is recorded as 20 s; a file whose length cannot be read is refused
// with one sentence while a cap applies.
func TestAudioIsPricedByTheFile(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_usd: 0.006}\n")
	e.llm.SetTranscriber(func(testkit.TranscriptionRequest) testkit.Reply { return testkit.TextReply("words") })
	e.start()
	const user = 2002
	long := testkit.VoiceNote(30*time.Minute, 0)
	over := "Transcribing that recording (30 min) would use $0.18, more than the $0.0060 left of your daily spending limit of $0.0060"
	e.tg.PushVoice(user, user, e.tg.AddFile("voice", "file.oga", "audio/ogg", long), 1, time.Now())
	waitCount(t, e.tg, user, over, 1)
	e.tg.PushDocument(user, user, e.tg.AddFile("documents", "lecture.ogg", "audio/ogg", long), "", time.Now())
	waitCount(t, e.tg, user, over, 2)
	e.tg.PushDocument(user, user, e.tg.AddFile("documents", "noise.mp3", "audio/mpeg", []byte(strings.Repeat("not an mp3 ", 300))), "", time.Now())
	waitCount(t, e.tg, user, "I can't tell how long that recording is", 1)
	if n := len(e.llm.TranscriptionRequests()); n != 0 {
		t.Fatalf("%d transcriptions of refused recordings", n)
	}
	e.tg.PushVoice(user, user, e.tg.AddFile("voice", "short.oga", "audio/ogg", testkit.VoiceNote(20*time.Second, 0)), 60, time.Now())
	waitCount(t, e.tg, user, "ok words", 1)
	e.out.Reset()
	if code := e.main().Main(context.Background(), []string{"usage", "--user", "2002"}); code != 0 {
		t.Fatalf("kairos usage: %d", code)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(e.out.String()), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r["model"] == "whisper-1" {
			if r["audio_seconds"] != float64(20) || r["calls"] != float64(1) || fmt.Sprint(r["cost_usd"]) != "0.002" {
				t.Fatalf("transcription row %v, want 20 s, 1 call, $0.002", r)
			}
			return
		}
	}
	t.Fatalf("no transcription row: %s", e.out.String())
}

// A day is a day: a user who reaches the daily cap at 10:35 in London
// (UTC), then 30 minutes later sets Pacific/Auckland, where a new day
// began 5 minutes ago, is still refused until London's midnight (before:
// the hop reset the cap and both turns were answered).
func TestZoneHopDoesNotResetTheDailyCap(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_tokens: 100}\n")
	clk := &testClock{t: time.Date(2026, 11, 25, 10, 35, 0, 0, time.UTC)}
	e.startAt(clk)
	const user = 2002
	for _, text := range []string{"one", "two", "three"} { // 135 tokens
		e.tg.PushText(user, user, text, clk.Now())
		waitCount(t, e.tg, user, "ok "+text, 1)
	}
	clk.Set(time.Date(2026, 11, 25, 11, 5, 0, 0, time.UTC)) // 00:05 on the 26th in Auckland
	e.tg.PushText(user, user, "/clock tz Pacific/Auckland", clk.Now())
	waitCount(t, e.tg, user, "Pacific/Auckland", 1)
	before := len(e.llm.Requests())
	for i, text := range []string{"four", "five"} {
		e.tg.PushText(user, user, text, clk.Now())
		waitCount(t, e.tg, user, "You have reached your daily token limit of 100 tokens; it resets at midnight (UTC), in 12 h 55 min", i+1)
	}
	if n := len(e.llm.Requests()) - before; n != 0 {
		t.Fatalf("%d model calls after the hop", n)
	}
}
