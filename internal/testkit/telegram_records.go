package testkit

import (
	"context"
	"fmt"
	"strings"
)

// --- records -----------------------------------------------------------------

func (f *FakeTelegram) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func copySent(s *SentMessage) SentMessage {
	c := *s
	c.Entities = append([]Entity(nil), s.Entities...)
	c.Edits = append([]Edit(nil), s.Edits...)
	return c
}

// Sent returns every message the bot sent, in order, with their edits.
func (f *FakeTelegram) Sent() []SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]SentMessage, 0, len(f.sent))
	for _, s := range f.sent {
		out = append(out, copySent(s))
	}
	return out
}

// SentTo returns the messages the bot sent to chatID, in order.
func (f *FakeTelegram) SentTo(chatID int64) []SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []SentMessage
	for _, s := range f.sent {
		if s.ChatID == chatID {
			out = append(out, copySent(s))
		}
	}
	return out
}

// Edits returns the successful edits of messages in chatID, in order.
func (f *FakeTelegram) Edits(chatID int64) []Edit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return filter(f.edits, func(e Edit) bool { return e.ChatID == chatID })
}

// ChatActions returns the chat actions sent to chatID, in order.
func (f *FakeTelegram) ChatActions(chatID int64) []ChatAction {
	f.mu.Lock()
	defer f.mu.Unlock()
	return filter(f.actions, func(a ChatAction) bool { return a.ChatID == chatID })
}

// CallbackAnswers returns the answered callback queries, in order.
func (f *FakeTelegram) CallbackAnswers() []CallbackAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]CallbackAnswer(nil), f.answers...)
}

// Calls returns the calls of method (case-insensitive; "" for all), in order.
func (f *FakeTelegram) Calls(method string) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.callsLocked(method)
}

func (f *FakeTelegram) callsLocked(method string) []Call {
	var out []Call
	for _, c := range f.calls {
		if method == "" || strings.EqualFold(c.Method, method) {
			out = append(out, c)
		}
	}
	return out
}

// Commands returns the command menu set for the default scope and no
// language.
func (f *FakeTelegram) Commands() []BotCommand { return f.CommandsFor("default", "") }

// CommandsFor returns the command menu for a scope type ("default",
// "all_private_chats", ...; "chat:<id>" for a chat scope) and language.
func (f *FakeTelegram) CommandsFor(scope, languageCode string) []BotCommand {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]BotCommand(nil), f.commands[scope+"|"+languageCode]...)
}

// Webhook returns the webhook state (URL empty when none is set).
func (f *FakeTelegram) Webhook() WebhookState {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.webhook
	w.AllowedUpdates = append([]string(nil), w.AllowedUpdates...)
	return w
}

// waitFor blocks until cond (called with the lock held) is true.
func (f *FakeTelegram) waitFor(ctx context.Context, what string, cond func() bool) error {
	for {
		f.mu.Lock()
		if cond() {
			f.mu.Unlock()
			return nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("testkit: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// WaitUntil blocks until cond, which may call the fake's accessors, holds
// after some change the bot made (a message, an edit, a call), or ctx
// ends. Tests wait on this event rather than polling on a fixed deadline.
func (f *FakeTelegram) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		ch := f.changed // taken before cond runs: no change is missed
		f.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitSent blocks until the bot has sent at least n messages (in all chats)
// and returns them all.
func (f *FakeTelegram) WaitSent(ctx context.Context, n int) ([]SentMessage, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d sent messages", n), func() bool { return len(f.sent) >= n })
	return f.Sent(), err
}

// WaitSentTo blocks until the bot has sent at least n messages to chatID
// and returns the messages sent to it.
func (f *FakeTelegram) WaitSentTo(ctx context.Context, chatID int64, n int) ([]SentMessage, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d messages to chat %d", n, chatID), func() bool {
		k := 0
		for _, s := range f.sent {
			if s.ChatID == chatID {
				k++
			}
		}
		return k >= n
	})
	return f.SentTo(chatID), err
}

// WaitCalls blocks until method was called at least n times (successful or
// not) and returns those calls.
func (f *FakeTelegram) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d %s calls", n, method), func() bool { return len(f.callsLocked(method)) >= n })
	return f.Calls(method), err
}

// WaitEdits blocks until at least n edits were made in chatID.
func (f *FakeTelegram) WaitEdits(ctx context.Context, chatID int64, n int) ([]Edit, error) {
	err := f.waitFor(ctx, fmt.Sprintf("%d edits in chat %d", n, chatID), func() bool {
		k := 0
		for _, e := range f.edits {
			if e.ChatID == chatID {
				k++
			}
		}
		return k >= n
	})
	return f.Edits(chatID), err
}

// WaitConsumed blocks until no update is pending (the bot confirmed them
// all with a later getUpdates offset, or the webhook accepted them).
func (f *FakeTelegram) WaitConsumed(ctx context.Context) error {
	return f.waitFor(ctx, "all updates to be confirmed", func() bool { return len(f.queue) == 0 })
}

// MustWaitSent is WaitSent that fails the test at its Deadline.
func (f *FakeTelegram) MustWaitSent(n int) []SentMessage {
	f.tb.Helper()
	ctx := Deadline(f.tb)
	out, err := f.WaitSent(ctx, n)
	if err != nil {
		f.tb.Fatalf("%v (got %d: %s)", err, len(out), sentSummary(out))
	}
	return out
}

// MustWaitSentTo is WaitSentTo that fails the test at its Deadline.
func (f *FakeTelegram) MustWaitSentTo(chatID int64, n int) []SentMessage {
	f.tb.Helper()
	ctx := Deadline(f.tb)
	out, err := f.WaitSentTo(ctx, chatID, n)
	if err != nil {
		f.tb.Fatalf("%v (got %d: %s)", err, len(out), sentSummary(out))
	}
	return out
}

func sentSummary(ms []SentMessage) string {
	var parts []string
	for _, m := range ms {
		t := m.LastText()
		if len(t) > 60 {
			t = t[:60] + "…"
		}
		parts = append(parts, fmt.Sprintf("%d:%q", m.ChatID, t))
	}
	return strings.Join(parts, ", ")
}

// filter returns, in order, the elements of xs that keep accepts (nil for
// none).
func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
