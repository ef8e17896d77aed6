package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
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
	if r.ph == 0 && r.upd != 0 && r.b.cfg.Updates != nil {
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
// already attempted. An attempt whose outcome is unknown (the process died
// mid-send) is not repeated: a lost part is better than a doubled one.
func (r *replier) sendOnce(ctx context.Context, part, html string) (int64, error) {
	if r.upd == 0 || r.b.cfg.Updates == nil {
		return r.b.send(ctx, r.in, html, nil)
	}
	key := r.key(part)
	if state, id, err := r.b.cfg.Updates.OutboxState(ctx, key); err != nil {
		return 0, err
	} else if state != kairos.OutboxNew {
		return id, nil
	}
	// Take the rate-limit slot first: the intent must be recorded right
	// before the request leaves, not before a wait that a crash could cut.
	if err := r.b.waitSlot(ctx, r.in); err != nil {
		return 0, err
	}
	state, id, err := r.b.cfg.Updates.BeginSend(ctx, key, r.in.ChatID)
	if err != nil {
		return 0, err
	}
	if state != kairos.OutboxNew {
		return id, nil
	}
	id, err = r.b.sendReserved(ctx, r.in, html, nil)
	if err != nil {
		return 0, err
	}
	if err := r.b.cfg.Updates.MarkSent(context.WithoutCancel(ctx), key, id); err != nil {
		r.b.log.Error("record sent message", "err", err)
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

func (b *Bot) withRetry(ctx context.Context, in *kairos.Inbound, method string, params map[string]any, out any, reserved bool) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
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
		if ae.Code == 429 {
			b.cfg.Metrics.TooManyRequests()
			wait := ae.RetryAfter
			if wait <= 0 {
				wait = time.Second
			}
			b.lim.backoff(in.ChatID, wait)
			b.log.Warn("telegram rate limit", "method", method, "retry_after", wait)
			if b.cfg.Limits.PerChat < 0 {
				_ = kairos.Sleep(ctx, wait)
			}
			continue
		}
		_ = kairos.Sleep(ctx, time.Duration(200<<attempt)*time.Millisecond)
	}
	return err
}

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
