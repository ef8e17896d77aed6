package bot

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
)

// ActionEvery is how often a turn's chat action is repeated while it
// works: Telegram shows one for about 5 s, or until a message arrives.
const ActionEvery = 4 * time.Second

var _ kairos.ActionReplier = (*replier)(nil)

// Action switches the chat action shown while the turn works (sent at
// once, then repeated by keepAction).
func (r *replier) Action(ctx context.Context, action string) {
	r.mu.Lock()
	if r.action == action || r.answered {
		r.mu.Unlock()
		return
	}
	r.action = action
	r.lastTyping = time.Now()
	r.mu.Unlock()
	r.sendAction(ctx, action)
}

func (r *replier) sendAction(ctx context.Context, action string) {
	params := map[string]any{"chat_id": r.in.ChatID, "action": action}
	if r.in.TopicID != 0 {
		params["message_thread_id"] = r.in.TopicID
	}
	if err := r.b.api.call(ctx, "sendChatAction", params, nil); err != nil {
		r.b.log.Debug("sendChatAction failed", "err", err)
	}
}

// DefaultActionDelay is Config.ActionDelay's default: a turn still
// working after half a second shows its chat action.
const DefaultActionDelay = 500 * time.Millisecond

// keepAction shows the turn's chat action (typing unless the work says
// otherwise) once the turn has worked for Config.ActionDelay, then every
// ActionEvery until the answer is sent or the returned stop is called: a
// long transcription, file or tool never leaves the chat silent, and a
// quick answer comes without one.
func (r *replier) keepAction(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		first := time.NewTimer(r.b.cfg.ActionDelay)
		defer first.Stop()
		select {
		case <-ctx.Done():
			return
		case <-first.C:
		}
		t := time.NewTicker(ActionEvery)
		defer t.Stop()
		for {
			r.mu.Lock()
			action, answered := r.action, r.answered
			if action == "" {
				action, r.action = kairos.ActionTyping, kairos.ActionTyping
			}
			due := time.Since(r.lastTyping) >= ActionEvery-100*time.Millisecond
			if due && !answered {
				r.lastTyping = time.Now()
			}
			r.mu.Unlock()
			if answered {
				return
			}
			if due {
				r.sendAction(ctx, action)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}
