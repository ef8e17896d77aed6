package bot

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// WebhookPath is where Telegram posts updates on the admin HTTP server.
const WebhookPath = "/telegram/webhook"

// StartWebhook registers url with Telegram (with the secret token) and
// resumes unfinished updates. Updates then arrive through WebhookHandler.
func (b *Bot) StartWebhook(ctx context.Context, url, secret string) error {
	if err := b.init(ctx); err != nil {
		return err
	}
	params := map[string]any{"url": url, "secret_token": secret, "allowed_updates": []string{"message", "callback_query"}}
	if err := b.api.call(ctx, "setWebhook", params, nil); err != nil {
		return err
	}
	return b.resume(ctx)
}

// WebhookHandler accepts Telegram's webhook posts. A request whose
// X-Telegram-Bot-Api-Secret-Token is missing or wrong gets 401 (compared in
// constant time). The update is stored before the 200 goes back, and
// processed asynchronously, so Telegram never waits on the model.
func (b *Bot) WebhookHandler(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
		if secret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !json.Valid(body) {
			// Malformed: acknowledge so Telegram does not redeliver it
			// forever; there is nothing to process.
			b.log.Warn("malformed webhook body")
			w.WriteHeader(http.StatusOK)
			return
		}
		sctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if _, err := b.Ingest(sctx, []json.RawMessage{body}); err != nil {
			b.log.Error("store webhook update", "err", err)
			// 500 makes Telegram retry later: nothing is lost.
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
