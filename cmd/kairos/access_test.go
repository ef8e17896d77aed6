package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// TestStrangerRefusalsAreRateLimited: a stranger who keeps writing hears
// the refusal bot.RefusalsPerUser times an hour, then nothing; the model
// is never asked.
func TestStrangerRefusalsAreRateLimited(t *testing.T) {
	e := newEnv(t)
	e.start()
	const stranger = 5556
	for i := range bot.RefusalsPerUser + 4 {
		e.tg.PushText(stranger, stranger, "hello? "+strings.Repeat("!", i), time.Now())
	}
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, "every update handled", func() bool {
		return count(t, db, "updates", "chat_id = ? AND status = ?", stranger, "done") == bot.RefusalsPerUser+4
	})
	if n := len(e.tg.SentTo(stranger)); n != bot.RefusalsPerUser {
		t.Fatalf("the stranger got %d refusals, want %d", n, bot.RefusalsPerUser)
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("a stranger reached the model (%d requests)", n)
	}
}

// TestWrongPairingCodesAreRateLimited: after bot.FailedPairsPerUser wrong
// codes an operator's /pair is refused for the hour, even with a right
// code, so codes cannot be guessed without end.
func TestWrongPairingCodesAreRateLimited(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.tg.PushText(5557, 5557, "let me in", time.Now())
	refusal := e.tg.MustWaitSentTo(5557, 1)[0].LastText()
	code := strings.Trim(refusal[strings.LastIndex(refusal, " ")+1:], "`")
	for i := range bot.FailedPairsPerUser {
		e.tg.PushText(operatorID, operatorID, "/pair 5557-WRONG"+strings.Repeat("X", i), time.Now())
	}
	waitReply(t, e.tg, operatorID, bot.FailedPairsPerUser, "not valid")
	e.tg.PushText(operatorID, operatorID, "/pair "+code, time.Now())
	got := waitReply(t, e.tg, operatorID, bot.FailedPairsPerUser+1, "Too many wrong pairing codes")
	if strings.Contains(got, "can now talk") {
		t.Fatalf("a code was accepted past the limit: %q", got)
	}
}

// TestAdminEndpointsExposeNothingPersonal: after a turn, /metrics,
// /healthz and /readyz name no user, chat or message; the default admin
// address is on loopback.
func TestAdminEndpointsExposeNothingPersonal(t *testing.T) {
	cfg, err := LoadConfig(func(string) string { return "" }, func() []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(cfg.HTTPAddr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("default KAIROS_HTTP_ADDR %q is not a loopback address", cfg.HTTPAddr)
	}
	e := newEnv(t)
	addr := e.start()
	e.llm.Enqueue(testkit.TextReply("Noted, Zebulon."))
	e.tg.PushText(2002, 2002, "my name is Zebulon and my PIN is 7319", time.Now(), testkit.From("Zebulon", "zeb_the_user"))
	waitReply(t, e.tg, 2002, 1, "Noted")
	e.tg.PushText(5558, 5558, "stranger here", time.Now(), testkit.From("Quentin", "quentin_x"))
	e.tg.MustWaitSentTo(5558, 1)
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// Names and texts must not appear at all; numbers (user and chat
		// ids, the PIN) must not appear in a label (a latency such as
		// 0.0055581 may hold the digits by chance).
		for _, personal := range []string{"Zebulon", "zeb_the_user", "Quentin", "stranger here", "Noted"} {
			if strings.Contains(string(body), personal) {
				t.Errorf("%s shows %q", path, personal)
			}
		}
		for _, id := range []string{"2002", "5558", "7319"} {
			if regexp.MustCompile(`="[^"]*` + id).Match(body) {
				t.Errorf("%s has a label holding %q", path, id)
			}
		}
	}
}
