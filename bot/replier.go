package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

// replier streams one turn's answer into a chat: an answer still streaming
// after one edit interval gets a placeholder message, then throttled edits
// while it grows (a quick answer goes out whole, in one send); the final
// text rendered as HTML and split at Telegram's limit. Every message it
// creates is recorded in the outbox first, so a resumed update never sends
// a part twice.
type replier struct {
	b          *Bot
	in         *kairos.Inbound
	upd        int64
	mu         sync.Mutex
	ph         int64 // placeholder message id (0 = none)
	last       time.Time
	shown      string
	lastTyping time.Time
	action     string    // the chat action keepAction repeats (chataction.go)
	answered   bool      // Final ran: no more chat actions
	start      time.Time // when the turn began
	// fresh: the first attempt at its update, so no part of the answer
	// can be in the outbox from an earlier one; the outbox reads before
	// a send are skipped (BeginSend still checks in its transaction).
	fresh bool
}

var _ kairos.Replier = (*replier)(nil)

func (b *Bot) replier(updateID int64, in *kairos.Inbound) *replier {
	return &replier{b: b, in: in, upd: updateID, start: b.cfg.Now()}
}

// Typing shows "typing…" (at most every 4 s; Telegram shows it for 5).
func (r *replier) Typing(ctx context.Context) {
	r.mu.Lock()
	if time.Since(r.lastTyping) < 4*time.Second {
		r.mu.Unlock()
		return
	}
	r.lastTyping = time.Now()
	r.mu.Unlock()
	params := map[string]any{"chat_id": r.in.ChatID, "action": "typing"}
	if r.in.TopicID != 0 {
		params["message_thread_id"] = r.in.TopicID
	}
	if err := r.b.api.call(ctx, "sendChatAction", params, nil); err != nil {
		r.b.log.Debug("sendChatAction failed", "err", err)
	}
}

// Partial shows the streamed answer so far, at most one edit per
// EditInterval (on Config.Now's clock).
func (r *replier) Partial(ctx context.Context, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.b.cfg.Now()
	if strings.TrimSpace(text) == "" || now.Sub(r.last) < r.b.cfg.EditInterval {
		return
	}
	// A quick answer goes out whole: no placeholder (and so no second
	// rate-limited call) unless the answer is still streaming after one
	// edit interval.
	if r.ph == 0 && now.Sub(r.start) < r.b.cfg.EditInterval {
		return
	}
	html := RenderHTML(text)
	if VisibleUnits(html) > MaxMessageUnits-8 {
		return // the final split will show it all
	}
	if html == r.shown {
		return
	}
	r.last = now
	if r.ph == 0 {
		id, err := r.sendOnce(ctx, "p", html+" …")
		if err != nil {
			r.b.log.Warn("placeholder failed", "err", err)
			return
		}
		r.ph = id
	} else if err := r.edit(ctx, r.ph, html+" …"); err != nil {
		r.b.log.Debug("streaming edit failed", "err", err)
	}
	r.shown = html
}

// Final delivers the answer: the first part replaces the placeholder, the
// rest follow as new messages.
func (r *replier) Final(ctx context.Context, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = true
	parts := SplitMarkdown(text, MaxMessageUnits)
	start := 0
	if r.ph == 0 && r.upd != 0 && !r.fresh && r.b.cfg.Updates != nil {
		// A resumed update whose placeholder went out before a crash:
		// finish in that message rather than send another.
		if state, id, err := r.b.cfg.Updates.OutboxState(ctx, r.key("p")); err == nil && state == kairos.OutboxSent && id != 0 {
			r.ph = id
		}
	}
	if r.ph != 0 {
		// The answer is delivered by an edit, which has no outbox intent
		// to commit the turn with: commit it first.
		if err := r.b.flushWrites(ctx); err != nil {
			return err
		}
		if err := r.edit(ctx, r.ph, parts[0]); err != nil {
			return err
		}
		start = 1
	}
	for i := start; i < len(parts); i++ {
		if _, err := r.sendOnce(ctx, fmt.Sprintf("%d", i), parts[i]); err != nil {
			return err
		}
	}
	r.b.cfg.Metrics.ReplySent("final")
	return nil
}

func (r *replier) key(part string) string {
	return fmt.Sprintf("u%d:%s", r.upd, part)
}

// sendOnce sends a new message unless the outbox says this part was
// already attempted (outboxSend).
func (r *replier) sendOnce(ctx context.Context, part, html string) (int64, error) {
	return r.b.outboxSendAs(ctx, r.in, r.outboxKey(part), r.fresh, func(ctx context.Context) (int64, error) {
		return r.b.sendReserved(ctx, r.in, html, nil)
	})
}

// outboxKey is the outbox key of a part of the turn's answer; "" (no
// outbox) when the turn answers no stored update.
func (r *replier) outboxKey(part string) string {
	if r.upd == 0 {
		return ""
	}
	return r.key(part)
}

// outboxSend sends one message of in's chat once: the reply outbox
// records the intent under key right before the request leaves, so a
// resumed update, a retry after a crash or another replica never sends it
// twice. When the outbox says key was already attempted, nothing is sent
// and its message id is returned (0 when the outcome is unknown: a lost
// message is better than a doubled one). send sends with the chat's
// rate-limit slot already held; with no outbox (key "", or no update
// store) it is just that.
func (b *Bot) outboxSend(ctx context.Context, in *kairos.Inbound, key string, send func(context.Context) (int64, error)) (int64, error) {
	return b.outboxSendAs(ctx, in, key, false, send)
}

// outboxSendAs is outboxSend; fresh (the first attempt at the key's
// update, which cannot have recorded it) skips the read that spares an
// already attempted key the wait for a rate-limit slot.
func (b *Bot) outboxSendAs(ctx context.Context, in *kairos.Inbound, key string, fresh bool, send func(context.Context) (int64, error)) (int64, error) {
	st := b.cfg.Updates
	if key == "" || st == nil {
		if err := b.waitSlot(ctx, in); err != nil {
			return 0, err
		}
		return send(ctx)
	}
	if !fresh { // a fresh key is checked by BeginSend's transaction alone
		if state, id, err := st.OutboxState(ctx, key); err != nil || state != kairos.OutboxNew {
			return id, err
		}
	}
	// Take the rate-limit slot first: the intent must be recorded right
	// before the request leaves, not before a wait that a crash could cut.
	if err := b.waitSlot(ctx, in); err != nil {
		return 0, err
	}
	state, id, err := st.BeginSend(ctx, key, in.ChatID)
	if err != nil || state != kairos.OutboxNew {
		return id, err
	}
	if id, err = send(ctx); err != nil {
		return 0, err
	}
	if err := st.MarkSent(context.WithoutCancel(ctx), key, id); err != nil {
		b.log.Error("record sent message", "key", key, "err", err)
	}
	return id, nil
}

func (r *replier) edit(ctx context.Context, msgID int64, html string) error {
	return r.b.edit(ctx, r.in, msgID, html, nil)
}

// send posts HTML to the chat (in its topic), within the rate limits, with
// retries on 429 (exactly retry_after) and transient failures. When
// Telegram cannot parse the HTML the text goes out plain rather than not
// at all.
func (b *Bot) send(ctx context.Context, in *kairos.Inbound, html string, markup any) (int64, error) {
	if err := b.waitSlot(ctx, in); err != nil {
		return 0, err
	}
	return b.sendReserved(ctx, in, html, markup)
}

// waitSlot waits for the chat's next outbound slot.
func (b *Bot) waitSlot(ctx context.Context, in *kairos.Inbound) error {
	if b.cfg.Limits.PerChat < 0 {
		return nil
	}
	return b.lim.wait(ctx, in.ChatID, in.ChatKind == kairos.ChatGroup)
}

// sendReserved sends once a slot is held (the first attempt does not wait
// again; retries do).
func (b *Bot) sendReserved(ctx context.Context, in *kairos.Inbound, html string, markup any) (int64, error) {
	params := map[string]any{"chat_id": in.ChatID, "text": html, "parse_mode": "HTML",
		"link_preview_options": map[string]any{"is_disabled": true}}
	if in.TopicID != 0 {
		params["message_thread_id"] = in.TopicID
	}
	if markup != nil {
		params["reply_markup"] = markup
	}
	var msg struct {
		ID int64 `json:"message_id"`
	}
	err := b.withRetry(ctx, in, "sendMessage", params, &msg, true)
	if isParseError(err) {
		params["text"] = plainText(html)
		delete(params, "parse_mode")
		err = b.withRetry(ctx, in, "sendMessage", params, &msg, false)
	}
	if err != nil {
		return 0, err
	}
	b.cfg.Metrics.ReplySent("send")
	return msg.ID, nil
}

func (b *Bot) edit(ctx context.Context, in *kairos.Inbound, msgID int64, html string, markup any) error {
	params := map[string]any{"chat_id": in.ChatID, "message_id": msgID, "text": html, "parse_mode": "HTML",
		"link_preview_options": map[string]any{"is_disabled": true}}
	if markup != nil {
		params["reply_markup"] = markup
	}
	err := b.withRetry(ctx, in, "editMessageText", params, nil, false)
	if isParseError(err) {
		params["text"] = plainText(html)
		delete(params, "parse_mode")
		err = b.withRetry(ctx, in, "editMessageText", params, nil, false)
	}
	var ae *APIError
	if errors.As(err, &ae) && strings.Contains(ae.Description, "message is not modified") {
		return nil
	}
	if err == nil {
		b.cfg.Metrics.ReplySent("edit")
	}
	return err
}

// withRetry calls method, waiting for the chat's slot before each try
// but a reserved first one, and tries again up to four times on a 429
// (the chat's limiter waits retry_after) or a transient failure (the
// wait doubles from 0.2 s): retryWait's rule.
func (b *Bot) withRetry(ctx context.Context, in *kairos.Inbound, method string, params map[string]any, out any, reserved bool) error {
	var err error
	var wait time.Duration
	for attempt := 0; attempt < sendTries; attempt++ {
		if !(reserved && attempt == 0) {
			if werr := b.waitSlot(ctx, in); werr != nil {
				return werr
			}
		}
		start := time.Now()
		err = b.api.call(ctx, method, params, out)
		b.cfg.Metrics.StageLatency("telegram_"+method, time.Since(start))
		if err == nil {
			return nil
		}
		var ae *APIError
		if !errors.As(err, &ae) || !ae.Temporary() || ctx.Err() != nil {
			return err
		}
		wait = retryWait(err, wait, 200*time.Millisecond, 5*time.Second)
		if ae.Code == 429 {
			b.cfg.Metrics.TooManyRequests()
			b.lim.backoff(in.ChatID, wait) // the chat's next slot waits it out
			b.log.Warn("telegram rate limit", "method", method, "retry_after", wait)
		}
		if attempt == sendTries-1 {
			break // no wait after the last try: the caller learns at once
		}
		if ae.Code != 429 || b.cfg.Limits.PerChat < 0 {
			_ = retrySleep(ctx, wait)
		}
	}
	return err
}

// sendTries is how many times a Telegram call is tried on temporary errors.
const sendTries = 5

// retrySleep waits between tries (tests count the waits).
var retrySleep = retry.Sleep

func isParseError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == 400 && strings.Contains(ae.Description, "can't parse entities")
}

// plainText strips tags and entities from rendered HTML.
func plainText(h string) string {
	var b strings.Builder
	for i := 0; i < len(h); i++ {
		if h[i] == '<' {
			if j := strings.IndexByte(h[i:], '>'); j >= 0 {
				i += j
				continue
			}
		}
		b.WriteByte(h[i])
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`).Replace(b.String())
}

func roundDur(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

var _ kairos.ButtonReplier = (*replier)(nil)

// FinalWithButtons delivers an answer with an inline keyboard under its
// last part (a command's answer: /reminders' Cancel buttons).
func (r *replier) FinalWithButtons(ctx context.Context, text string, rows [][]Button) error {
	r.mu.Lock()
	r.answered = true
	r.mu.Unlock()
	_, err := r.b.SendWithButtons(ctx, r.in, text, rows)
	return err
}
