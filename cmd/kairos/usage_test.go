package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/chart"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// usageEnv answers every chat call with "ok" for 40 prompt and 5
// completion tokens (45 a call).
func usageEnv(t *testing.T, policy string) *env {
	t.Helper()
	e := newEnv(t)
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(policy), 0o600)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		return testkit.Reply{Text: "ok " + r.LastUserMessage(), Usage: &testkit.Usage{PromptTokens: 40, CompletionTokens: 5}}
	})
	return e
}

// countSent counts the messages to chat that contain s.
func countSent(tg *testkit.FakeTelegram, chat int64, s string) int {
	n := 0
	for _, m := range tg.SentTo(chat) {
		if strings.Contains(m.LastText(), s) {
			n++
		}
	}
	return n
}

// waitCount polls until n messages to chat contain s.
func waitCount(t *testing.T, tg *testkit.FakeTelegram, chat int64, s string, n int) {
	t.Helper()
	deadline := testkit.GiveUpAt(t)
	for countSent(tg, chat, s) < n {
		if time.Now().After(deadline) {
			var texts []string
			for _, m := range tg.SentTo(chat) {
				texts = append(texts, m.LastText())
			}
			t.Fatalf("chat %d: %d message(s) with %q, want %d; sent: %q", chat, countSent(tg, chat, s), s, n, texts)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A daily token cap reached mid-day: the user is told at 80% once, the
// operators once when the cap is reached, the next turns get one
// sentence and no model request, an operator's /usage lift lets the user
// on, and /usage sends a chart of the documented size with one bar (today).
func TestUsageCapReachedMidDayRefusesWithoutModelRequest(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_tokens: 100}\n")
	e.start()
	user := int64(2002)
	for i, text := range []string{"one", "two", "three"} {
		e.tg.PushText(user, user, text, time.Now())
		waitCount(t, e.tg, user, "ok "+text, 1)
		if i == 1 { // 90 of 100 tokens
			waitCount(t, e.tg, user, "Heads-up: you have used 80% of your daily token limit (90 tokens of 100 tokens)", 1)
		}
	}
	waitCount(t, e.tg, operatorID, "User 2002 reached their daily token limit (100 tokens)", 1)
	for _, text := range []string{"four", "five"} {
		e.tg.PushText(user, user, text, time.Now())
		waitCount(t, e.tg, user, "You have reached your daily token limit of 100 tokens; it resets at midnight (UTC), in ", map[string]int{"four": 1, "five": 2}[text])
	}
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("model requests = %d, want 3 (none for the refused turns)", n)
	}
	if n := countSent(e.tg, user, "Heads-up"); n != 1 {
		t.Fatalf("80%% notices = %d, want 1", n)
	}
	if n := countSent(e.tg, operatorID, "reached their daily token limit"); n != 1 {
		t.Fatalf("operator notices = %d, want 1", n)
	}
	// Only an operator lifts; then the user is answered again.
	e.tg.PushText(user, user, "/usage lift 2002", time.Now())
	waitCount(t, e.tg, user, "Only an operator can lift a cap.", 1)
	e.tg.PushText(operatorID, operatorID, "/usage lift 2002", time.Now())
	waitCount(t, e.tg, operatorID, "Lifted the caps of user 2002", 1)
	e.tg.PushText(user, user, "six", time.Now())
	waitCount(t, e.tg, user, "ok six", 1)

	e.tg.PushText(user, user, "/usage", time.Now())
	waitCount(t, e.tg, user, "Today: 180 tokens, no price known (tokens only) in 4 call(s)", 1)
	waitCount(t, e.tg, user, "daily token limit 100 tokens (lifted by an operator until it resets)", 1)
	photos := e.tg.SentPhotos()
	if len(photos) != 1 || photos[0].ChatID != user {
		t.Fatalf("photos = %+v, want one to the user", photos)
	}
	img, err := png.Decode(bytes.NewReader(photos[0].Image))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X != chart.Width || sz.Y != chart.Height {
		t.Fatalf("chart size = %v, want %dx%d", sz, chart.Width, chart.Height)
	}
	if n := chart.CountBars(img); n != 1 {
		t.Fatalf("chart bars = %d, want 1 (today)", n)
	}
	// An operator sees everyone and the bot's total.
	e.tg.PushText(operatorID, operatorID, "/usage", time.Now())
	waitCount(t, e.tg, operatorID, "Everyone (the bot's total) (UTC):\nToday: 180 tokens", 1)
	waitCount(t, e.tg, operatorID, "telegram:2002: 180 tokens", 1)
}

// Caps and prices hot-reload: a price added to the policy prices the calls
// made from then on (the earlier ones stay tokens only), a dollar cap
// applies without a restart, and a cap of 0 says plainly that the model
// cannot be used. The metrics count tokens and dollars by model, with no
// user in the labels.
func TestUsageCapsAndPricesHotReload(t *testing.T) {
	base := "access:\n  operators: [1001]\n  allowed_users: [2002]\n"
	e := usageEnv(t, base)
	addr := e.start()
	user := int64(2002)
	e.tg.PushText(user, user, "before", time.Now())
	waitCount(t, e.tg, user, "ok before", 1)

	// $1000 and $2000 per million: 40×1000/1e6 + 5×2000/1e6 = $0.05 a call.
	priced := base + "models:\n  test-model:\n    price: {input: 1000, output: 2000}\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_usd: 0.08}\n"
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(priced), 0o600)
	pollUsage(t, e, user, "daily spending limit $0.08")
	for _, text := range []string{"first", "second"} {
		e.tg.PushText(user, user, text, time.Now())
		waitCount(t, e.tg, user, "ok "+text, 1)
	}
	e.tg.PushText(user, user, "third", time.Now())
	waitCount(t, e.tg, user, "You have reached your daily spending limit of $0.08; it resets at midnight", 1)
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("model requests = %d, want 3", n)
	}
	e.tg.PushText(user, user, "/usage", time.Now())
	waitCount(t, e.tg, user, "Today: 135 tokens, $0.10 (1 call(s) of unpriced models not in it) in 3 call(s)", 1)

	zero := base + "budgets:\n  spend:\n    daily_tokens: 0\n"
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(zero), 0o600)
	pollUsage(t, e, user, "daily token limit 0 tokens (no model use)")
	e.tg.PushText(user, user, "may I?", time.Now())
	waitCount(t, e.tg, user, "You cannot use the model: your daily token limit is 0.", 1)
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("model requests = %d after a cap of 0, want 3", n)
	}

	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`kairos_cost_usd_total{model="test-model"} 0.1`, `kairos_tokens_total{model="test-model",kind="prompt"} 120`,
		`kairos_tokens_total{model="test-model",kind="completion"} 15`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if regexp.MustCompile(`kairos_(tokens|cost_usd)_total\{[^}]*2002`).Match(body) {
		t.Errorf("a user id in the usage metrics' labels")
	}

	// kairos usage prints the same as JSON.
	m := e.main()
	e.out.Reset()
	if code := m.Main(context.Background(), []string{"usage", "--user", "2002"}); code != 0 {
		t.Fatalf("kairos usage exit %d: %s", code, e.logs.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(e.out.String()), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("kairos usage printed %q (%v)", e.out.String(), err)
	}
	r := rows[0]
	if r["model"] != "test-model" || r["tokens"] != float64(135) || r["calls"] != float64(3) || r["unpriced_calls"] != float64(1) || r["cost_usd"] != 0.1 {
		t.Fatalf("row = %v", r)
	}
}

// pollUsage sends /usage until its answer contains want (a policy reload
// is seen by the next turn after the watcher picks it up).
func pollUsage(t *testing.T, e *env, chat int64, want string) {
	t.Helper()
	deadline := testkit.GiveUpAt(t)
	for i := 0; countSent(e.tg, chat, want) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("/usage never said %q", want)
		}
		before := countSent(e.tg, chat, "Your usage")
		e.tg.PushText(chat, chat, "/usage", time.Now())
		waitCount(t, e.tg, chat, "Your usage", before+1)
	}
}

// A scheduled task counts against its owner and is held to the
// background share: past it, the task is skipped with a note in its
// thread and the model is not asked.
func TestUsageTaskPastBackgroundShareIsSkipped(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    background_share: 0.5\n    per_user:\n      \"2002\": {daily_tokens: 100}\n")
	e.start()
	const user = 2002
	e.tg.PushText(user, user, "one", time.Now())
	waitCount(t, e.tg, user, "ok one", 1)
	e.tg.PushText(user, user, "two", time.Now()) // 90 tokens: past 50% but under the cap
	waitCount(t, e.tg, user, "ok two", 1)
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0)
	at := time.Now().Add(-time.Second)
	e.seedSchedules(t, &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: thread, Kind: kairos.ScheduleTask, Task: "plan my week",
		TZ: "UTC", NextRun: at, Start: at.UTC().Format("2006-01-02T15:04:05")})
	waitCount(t, e.tg, user, "Skipped this scheduled task: scheduled tasks may use 50% of your daily token limit of 100 tokens, and that is used up", 1)
	if n := len(e.llm.Requests()); n != 2 {
		t.Fatalf("model requests = %d, want 2 (none for the skipped task)", n)
	}
	// The owner's own turns still run: the share binds background work only.
	e.tg.PushText(user, user, "three", time.Now())
	waitCount(t, e.tg, user, "ok three", 1)
}

// kairos usage only reads: with no database it prints [] and creates
// nothing; on a database it changes no byte; a bad --since exits 2.
func TestUsageCommandReadsOnly(t *testing.T) {
	e := newEnv(t)
	code := e.main().Main(context.Background(), []string{"usage"})
	if sqlite := e.vars["KAIROS_DATABASE_URL"] == ""; sqlite && (code != 0 || strings.TrimSpace(e.out.String()) != "[]") {
		t.Fatalf("usage without a database: exit %d, %q", code, e.out.String())
	}
	if _, err := os.Stat(e.vars["KAIROS_DATA_DIR"]); !os.IsNotExist(err) {
		t.Fatalf("kairos usage created the data folder: %v", err)
	}
	if code := e.main().Main(context.Background(), []string{"migrate"}); code != 0 {
		t.Fatalf("migrate: %d", code)
	}
	dbPath := filepath.Join(e.vars["KAIROS_DATA_DIR"], "kairos.db")
	before, _ := os.ReadFile(dbPath)
	e.out.Reset()
	if code := e.main().Main(context.Background(), []string{"usage", "--since", "2026-01-01"}); code != 0 || strings.TrimSpace(e.out.String()) != "[]" {
		t.Fatalf("usage on an empty database: exit %d, %q %s", code, e.out.String(), e.logs.String())
	}
	if after, _ := os.ReadFile(dbPath); !bytes.Equal(before, after) {
		t.Fatal("kairos usage changed the database file")
	}
	if code := e.main().Main(context.Background(), []string{"usage", "--since", "yesterday"}); code != 2 {
		t.Fatalf("bad --since: exit %d, want 2", code)
	}
}

// Transcription is priced (whisper-1's built-in $0.006 a minute, by the
// length read from the file) and counted against the user; a recording
// whose transcription would go past the cap is refused before it is
// transcribed, and so is every one at the cap.
func TestUsageTranscriptionCountsAndIsCapped(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_usd: 0.0006}\n")
	e.llm.EnqueueTranscript("hello there")
	e.llm.EnqueueTranscript("and again")
	e.start()
	f := e.tg.AddFile("voice", "file.oga", "audio/ogg", testkit.VoiceNote(4*time.Second, 4096))
	e.tg.PushVoice(2002, 2002, f, 4, time.Now()) // 4 s: $0.0004
	waitCount(t, e.tg, 2002, "ok hello there", 1)
	e.tg.PushVoice(2002, 2002, f, 4, time.Now()) // another $0.0004 would end at $0.0008
	waitCount(t, e.tg, 2002, "Transcribing that recording (4 s) would use $0.0004, more than the $0.0002 left of your daily spending limit of $0.0006", 1)
	e.tg.PushVoice(2002, 2002, f, 4, time.Now())
	waitCount(t, e.tg, 2002, "Transcribing that recording (4 s) would use $0.0004", 2)
	if n := len(e.llm.TranscriptionRequests()); n != 1 {
		t.Fatalf("transcriptions = %d, want 1", n)
	}
	if n := len(e.llm.Requests()); n != 1 {
		t.Fatalf("chat requests = %d, want 1", n)
	}
	e.out.Reset()
	if code := e.main().Main(context.Background(), []string{"usage", "--user", "2002"}); code != 0 {
		t.Fatalf("kairos usage: %d", code)
	}
	var rows []map[string]any
	json.Unmarshal([]byte(e.out.String()), &rows)
	var audio bool
	for _, r := range rows {
		if r["model"] == "whisper-1" {
			audio = r["audio_seconds"] == float64(4) && r["cost_usd"] == 0.0004 && r["calls"] == float64(1)
		}
	}
	if !audio {
		t.Fatalf("no priced transcription row: %s", e.out.String())
	}
}

// /codestats gains a chart: one bar for the runs that succeeded and one
// per failure category.
func TestCodeStatsChart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	code := store.NewCodeStore(db)
	for i, cat := range []string{"", "", "timeout", "syntax", "timeout"} {
		err := code.RecordExecution(ctx, &kairos.CodeExecution{ID: fmt.Sprintf("x%d", i), Code: "1", Success: cat == "",
			ErrorCategory: cat, UserKey: "telegram:2002", CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	e.start()
	e.tg.PushText(operatorID, operatorID, "/codestats", time.Now())
	waitCount(t, e.tg, operatorID, "5", 1)
	deadline := testkit.GiveUpAt(t)
	for len(e.tg.SentPhotos()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no chart sent")
		}
		time.Sleep(10 * time.Millisecond)
	}
	img, err := png.Decode(bytes.NewReader(e.tg.SentPhotos()[0].Image))
	if err != nil {
		t.Fatal(err)
	}
	if n := chart.CountBars(img); n != 3 {
		t.Fatalf("bars = %d, want 3 (succeeded, timeout, syntax)", n)
	}
}

// kairos chat: the notices are printed on the terminal, a capped turn
// gets the sentence, /usage answers in words.
func TestUsageInTerminalChat(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\nbudgets:\n  spend:\n    daily_tokens: 100\n")
	delete(e.vars, "TELEGRAM_BOT_TOKEN")
	m := e.main()
	m.Stdin = strings.NewReader("one\ntwo\nthree\nfour\n/usage\n")
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	out := e.out.String()
	for _, want := range []string{"[usage] Heads-up: you have used 80% of your daily token limit", "ok three",
		"You have reached your daily token limit of 100 tokens", "Today: 135 tokens", "(On Telegram this comes with a chart"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("model requests = %d, want 3", n)
	}
}
