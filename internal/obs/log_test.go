package obs_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/obs"
)

func TestRedactingHandler(t *testing.T) {
	const token = "123456:AAEexampleBotTokenValue"
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log := obs.NewLogger(&buf, format, slog.LevelDebug, []string{token, "s3cr3t-value"})
			uerr := &url.Error{Op: "Post", URL: "https://api.telegram.org/bot" + token + "/getUpdates", Err: errors.New("connection refused")}
			log.Error("request failed "+token, "err", uerr, "wrapped", fmt.Errorf("call: %w", uerr))
			log.With("key", "s3cr3t-value").Info("x", slog.Group("g", "inner", token))
			if strings.Contains(buf.String(), token) || strings.Contains(buf.String(), "s3cr3t-value") {
				t.Fatalf("secret in log:\n%s", buf.String())
			}
			if !strings.Contains(buf.String(), "[REDACTED]") {
				t.Fatalf("nothing redacted:\n%s", buf.String())
			}
		})
	}
}

// TestShortSecretsMaskedAsWholeValues: a short secret is masked where it
// stands alone, not inside other words; a long one everywhere.
func TestShortSecretsMaskedAsWholeValues(t *testing.T) {
	const token = "123456:AAEexampleBotTokenValue"
	var buf bytes.Buffer
	log := obs.NewLogger(&buf, "text", slog.LevelDebug, []string{"admin", token})
	log.Info("the administrator logged in", "who", "admin", "pw", "admin!", "url", "https://x/bot"+token+"/getMe")
	out := buf.String()
	for _, want := range []string{"the administrator logged in", "who=[REDACTED]", `pw=[REDACTED]!`, "bot[REDACTED]/getMe"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestLogRedactionIsOfWholeValues: eight bytes of a secret inside other
// text (the bot id's digits in a list of numbers) are not masked.
func TestLogRedactionIsOfWholeValues(t *testing.T) {
	const token = "123456789:TEST-fake-bot-token"
	var buf bytes.Buffer
	log := obs.NewLogger(&buf, "text", slog.LevelDebug, []string{token})
	log.Info("migrations applied", "versions", "[1 2 3 4 5 6 7 8 10]", "chat", 12345678, "url", "https://x/bot"+token+"/getMe")
	out := buf.String()
	for _, want := range []string{"[1 2 3 4 5 6 7 8 10]", "chat=12345678", "bot[REDACTED]/getMe"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}
